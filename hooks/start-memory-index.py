"""SessionStart (startup, resume, clear, compact): a compact summary of what memory holds."""

from _hook import run_hook

run_hook("start-memory-index")
