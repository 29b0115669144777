"""SubagentStop hook: validate the in-progress tasks assigned to the agent that just stopped.

For each in-progress task of the work breakdown (`memory task`) whose `agent` is the
stopping agent (`agent_type`, e.g. `memory:implementer`, or its plain name), runs the
task's `tests` in the project directory (60 s each, 150 s in all), checks that its
`deliverables` exist, records `validationResults`, and marks the task done (rolling
the status up) when both pass and its dependencies are done. Test commands come from
the repository's files, so a task whose commands the user has not trusted for this
repository (`memory task trust`) is skipped, and the user is told how to trust them
(a `systemMessage`: the user's decision, not the agent's). Compaction's SubagentStop
calls carry an empty `agent_type` and are ignored. Prints nothing else; fails open
(see _hook.py).
"""

from _hook import run_hook

run_hook("subagent-validation")
