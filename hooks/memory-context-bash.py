"""PostToolUse (Bash): warn about gotchas relevant to the command and to errors in its output."""

from _hook import run_hook

from _lib.session import handlers

run_hook(handlers.memory_context_bash)
