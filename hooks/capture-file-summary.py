"""PostToolUse (Read): create or refresh a file-summary memory when a large source file is read."""

from _hook import run_hook

run_hook("capture-file-summary")
