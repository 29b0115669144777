"""SessionStart (async): housekeeping that must not delay the session.

Applies retention to automatically captured memories, refreshes the project's index.md,
and forgets the hook state of sessions idle for two weeks.
"""

from _hook import run_hook

from _lib.session import handlers

run_hook(handlers.maintenance)
