"""PostToolUse (Read): warn about gotchas relevant to the file just read, each once per session."""

from _hook import run_hook

from _lib.session import handlers

run_hook(handlers.memory_context)
