"""PreCompact: save what this session learned so it survives compaction.

The session memory is written now (not only at the end), and a short note is kept for
the SessionStart(compact) hook to put back into the fresh context.
"""

from _hook import run_hook

run_hook("pre-compact-memory")
