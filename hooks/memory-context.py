"""PostToolUse (Read): warn about gotchas relevant to the file just read, each once per session."""

from _hook import run_hook

run_hook("memory-context")
