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

from __future__ import annotations

import os

from _hook import log, run_hook, workspace_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def handle(payload: dict[str, Any]) -> dict[str, Any] | None:
    agent = payload.get("agent_type")
    if not isinstance(agent, str) or not agent.strip():
        return None
    from _lib.tasks import validation as taskhooks

    workspace, _ = workspace_for(payload)
    if workspace.project_is_global or not (workspace.project_root / "tasks").is_dir():
        return None
    timeout = os.environ.get("CLAUDE_MEMORY_TASK_TEST_TIMEOUT")
    outcomes = taskhooks.validate_agent_tasks(workspace, agent.strip(),
                                          test_timeout=float(timeout) if timeout else None)
    refused: dict[str, list[str]] = {}
    for outcome in outcomes:
        if outcome.get("untrusted"):
            refused[outcome["id"]] = outcome["untrusted"]
            log(f"did not validate task {outcome['id']} for {agent}: "
                f"{len(outcome['untrusted'])} test command(s) not trusted")
            continue
        log(f"validated task {outcome['id']} for {agent}: tests {'pass' if outcome['testsPass'] else 'fail'}, "
            f"deliverables {'present' if outcome['deliverablesExist'] else 'missing'}"
            + (", marked done" if outcome["done"] else ""))
    if refused:
        from _lib.tasks import trust as tasktrust

        return {"systemMessage": tasktrust.refusal(workspace, refused)}
    return None


if __name__ == "__main__":
    run_hook(handle)
