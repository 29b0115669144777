"""SessionEnd: finish the session memory and clean up (within SessionEnd's ~1.5 s budget).

The notes were gathered during the session by the other hooks, so this only writes one
memory file and removes the session's state.
"""

from _hook import run_hook

run_hook("end-memory")
