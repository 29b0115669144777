"""SubagentStop: keep a subagent's final report as a discovery memory."""

from _hook import run_hook

from _lib.session import handlers

run_hook(handlers.capture_subagent)
