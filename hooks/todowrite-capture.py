"""PostToolUse hook on TodoWrite: mirror Claude's todo list into the project's task store.

The list (`tool_input.todos`: [{content, status, activeForm}]) becomes one task per
todo under the epic "Claude sessions" > feature "Session <date> <session id>", matched
by text on later calls, with statuses mapped (pending, in_progress -> in-progress,
completed -> done) and rolled up, so the plan survives the session. Runs only in a
project (a git repository or one with .claude/memory) and when the config's
`capture.capture_todos` is true. Prints nothing; fails open (see _hook.py).
"""

from _hook import run_hook

run_hook("todowrite-capture")
