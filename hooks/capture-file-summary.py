"""PostToolUse (Read): create or refresh a file-summary memory when a large source file is read."""

from _hook import run_hook

from _lib.session import handlers

run_hook(handlers.capture_file_summary)
