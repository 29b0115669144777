"""SessionStart (startup, resume, clear, compact): a compact summary of what memory holds."""

from _hook import run_hook

from _lib.session import handlers

run_hook(handlers.start_memory_index)
