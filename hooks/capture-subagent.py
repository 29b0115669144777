"""SubagentStop: keep a subagent's final report as a discovery memory."""

from _hook import run_hook

run_hook("capture-subagent")
