"""SessionStart (async): housekeeping that must not delay the session.

Takes in memory files edited by hand in place (every file's stamp is checked), applies
retention to automatically captured memories, refreshes the project's index.md, and forgets
the hook state of sessions idle for two weeks.
"""

from _hook import run_hook

run_hook("maintenance")
