#!/usr/bin/env python3
"""Plan work as epics > features > tasks with dependencies, roll-up and progress (project scope)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

import _cli
from _lib.base import errors
from _lib.tasks import taskstore as tasks
from _lib.workspace.scopes import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EXAMPLES = """\
examples:
  memory task add --title "Authentication"                           # epic 1
  memory task add --title "Login form" --parent 1                    # feature 1.1
  memory task add --title "LoginForm component" --parent 1.1 \\
      --deliverable src/LoginForm.tsx --test "npm test -- LoginForm" --agent memory:implementer
  memory task add --title "Wire the API" --parent 1.1 --depends 1.1.1
  memory task ready                                                  # pending tasks you can start now
  memory task status 1.1.1 in-progress
  memory task status 1.1.1 done                                      # rolls up to 1.1 and 1
  memory task tree
  memory task list --status pending --type task --json
  memory task update 1.1.2 --set title="Wire the REST API" --set dependencies=1.1.1
  memory task update 1.1.2 --patch '{"tests": ["pytest -q tests/api"], "description": null}'
  memory task delete 1.1 --cascade
  memory task validate --fix
  memory task trust --list                                           # the test commands, trusted or not
  memory task trust                                                  # allow them to run in this repository

Tasks live in .claude/memory/tasks/<id>.json; ids are WBS style (1 epic, 1.2 feature,
1.2.3 task) and assigned in order. A parent's status is rolled up from its children
(all done: done; any started or done: in-progress; else pending); progress counts the
done leaf tasks under it (a task without children counts itself) and is kept in the
index. A dependency on X waits for all of X, and tasks inherit their ancestors'
dependencies. task-index.json is derived and rebuilt when stale.

When a subagent stops, the tasks assigned to it are validated: their --test commands
run in the project directory. Those commands come from the task files, which a clone or
a pull may bring, so they run only once you have trusted them for this repository with
`memory task trust` (kept outside the repository; a new or changed command needs it again).

A command killed halfway leaves nothing half done: the next task command completes it.
"""

STATUS_MARK = {"pending": " ", "in-progress": "~", "done": "x"}


def main(argv: list[str]) -> int:
    parser = _cli.parser("task", __doc__.splitlines()[0], EXAMPLES)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_cli.ArgumentParser)
    chosen = argv[0] if argv and argv[0] in COMMANDS else None  # build only its parser: argparse is slow
    for name, (handler, build, summary) in COMMANDS.items():
        if chosen is not None and name != chosen:
            continue
        sub = commands.add_parser(name, help=summary, description=summary, formatter_class=_cli.HelpFormatter,
                                  prog=f"memory task {name}")
        build(sub)
        _cli.add_json(sub)
        sub.set_defaults(handler=handler)
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.error("choose a command: " + ", ".join(COMMANDS))
    workspace = Workspace(load_config=False)  # tasks need no settings; a broken config.json must not stop them
    store = tasks.TaskStore(workspace)
    try:
        code = args.handler(store, args)
    finally:
        if store.changed:  # after the task lock: index.md shows the open tasks
            from _lib.ops import entrypoint  # only after a change: reading tasks needs no catalog

            with contextlib.suppress(errors.Error, OSError):
                entrypoint.refresh(workspace)
    _cli.print_warnings(workspace.warnings)
    return code


# -- add ----------------------------------------------------------------------------------------

def build_add(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--title", required=True, help="one line, up to 200 characters")
    sub.add_argument("--parent", metavar="ID", help="the epic or feature to add it to (default: a new epic)")
    sub.add_argument("--depends", action="append", default=[], metavar="ID,...",
                     help="comma-separated ids that must be done first (repeatable)")
    sub.add_argument("--description", help="longer text")
    sub.add_argument("--deliverable", action="append", default=[], metavar="PATH",
                     help="a file the task produces, relative to the project (repeatable; glob patterns allowed)")
    sub.add_argument("--test", action="append", default=[], metavar="CMD",
                     help="a shell command that must pass, run in the project directory (repeatable)")
    sub.add_argument("--criterion", action="append", default=[], metavar="TEXT",
                     help="an acceptance criterion (repeatable)")
    sub.add_argument("--agent", metavar="NAME", help="the subagent doing it, e.g. memory:implementer "
                     "(its SubagentStop runs the tests and checks the deliverables)")


def run_add(store: tasks.TaskStore, args: argparse.Namespace) -> int:
    result = store.add(args.title, parent=args.parent, dependencies=_id_list(",".join(args.depends)),
                       description=args.description, deliverables=args.deliverable, tests=args.test,
                       criteria=args.criterion, agent=args.agent)
    task = result["task"]
    untrusted = _untrusted_tests(store, task)
    if args.json:
        _cli.emit_json({**result, "untrustedTests": untrusted})
        return 0
    print(f"Created {task['type']} {task['id']}: {task['title']}")
    _print_rolled(result["rolledUp"])
    _print_trust_note(untrusted)
    return 0


# -- show, list, tree, ready ---------------------------------------------------------------------

def build_show(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("id", help="the task id, e.g. 1.2.3")


def run_show(store: tasks.TaskStore, args: argparse.Namespace) -> int:
    entry = store.entry(args.id)
    task = store.task(entry["id"])
    progress = store.progress(entry["id"])
    if args.json:
        _cli.emit_json({**task, "progress": progress})  # the file, plus its derived progress
        return 0
    print(f"{task['id']}  {task['type']}  {task['status']}  {progress['completed']}/{progress['total']}  "
          f"{task.get('title', '')}")
    if task.get("description"):
        print(f"\n{task['description']}\n")
    blocked = store.blockers(entry["id"])
    rows = [
        ("parent", task.get("parent") or "-"),
        ("children", ", ".join(task.get("children") or []) or "-"),
        ("dependencies", store.describe(task.get("dependencies") or []) or "-"),
        ("blocked by", store.describe(blocked) if blocked and task["status"] != "done" else ""),
        ("agent", task.get("agent") or ""),
        ("started", task.get("startedAt") or ""),
        ("completed", task.get("completedAt") or ""),
        ("created", task.get("createdAt") or ""),
        ("updated", task.get("updatedAt") or ""),
    ]
    for label, value in rows:
        if value:
            print(f"{label + ':':<14}{value}")
    for label, key in (("acceptance criteria", "acceptanceCriteria"), ("deliverables", "deliverables"),
                       ("tests", "tests")):
        if task.get(key):
            print(f"{label}:")
            for item in task[key]:
                print(f"  - {item}")
    results = task.get("validationResults")
    if isinstance(results, dict) and results:
        print(f"validation:   tests {'pass' if results.get('testsPass') else 'FAIL'}, deliverables "
              f"{'present' if results.get('deliverablesExist') else 'MISSING'}"
              + (f" ({results['checkedAt']})" if results.get("checkedAt") else ""))
    return 0


def build_list(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--status", choices=tasks.STATUSES, help="only tasks with this status")
    sub.add_argument("--type", choices=tasks.TYPES, help="only epics, features or tasks")
    sub.add_argument("--parent", metavar="ID", help="only the direct children of ID (`root` for the epics)")


def run_list(store: tasks.TaskStore, args: argparse.Namespace) -> int:
    entries = store.listing(status=args.status, type=args.type, parent=args.parent)
    if args.json:
        _cli.emit_json({"count": len(entries), "tasks": entries})
        return 0
    if not entries:
        print("No tasks found." if store.entries else 'No tasks yet: add one with `memory task add --title "..."`.')
        return 0
    rows = [[entry["id"], entry["type"], entry["status"], _fraction(store, entry), entry.get("title", "")]
            for entry in entries]
    print(_cli.table(["ID", "TYPE", "STATUS", "PROGRESS", "TITLE"], rows))
    print(f"\n{len(entries)} task{'' if len(entries) == 1 else 's'}")
    return 0


def build_tree(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("id", nargs="?", help="show only this epic or feature and what is under it")


def run_tree(store: tasks.TaskStore, args: argparse.Namespace) -> int:
    roots = store.tree(args.id)
    if args.json:
        _cli.emit_json({"tasks": roots})
        return 0
    if not roots:
        print('No tasks yet: add one with `memory task add --title "..."`.')
        return 0
    lines: list[str] = []
    for root in roots:
        _tree_lines(root, "", "", lines)
    print("\n".join(lines))
    return 0


def _tree_lines(node: dict[str, Any], lead: str, child_lead: str, lines: list[str]) -> None:
    progress = node["progress"]
    counts = f" {progress['completed']}/{progress['total']}" if node["children"] else ""
    lines.append(f"{lead}[{STATUS_MARK[node['status']]}] {node['id']} {node['title']}  ({node['status']}{counts})")
    for position, child in enumerate(node["children"]):
        last = position == len(node["children"]) - 1
        branch, through = ("└── ", "    ") if last else ("├── ", "│   ")
        _tree_lines(child, child_lead + branch, child_lead + through, lines)


def build_ready(sub: argparse.ArgumentParser) -> None:
    pass


def run_ready(store: tasks.TaskStore, args: argparse.Namespace) -> int:
    entries = store.ready()
    if args.json:
        _cli.emit_json({"count": len(entries), "tasks": entries})
        return 0
    if not entries:
        print("Nothing is ready: every pending task waits for a dependency." if store.listing(status="pending")
              else "Nothing is ready: no pending tasks.")
        return 0
    rows = [[entry["id"], entry["type"], entry.get("agent", ""), entry.get("title", "")] for entry in entries]
    print(_cli.table(["ID", "TYPE", "AGENT", "TITLE"], rows))
    return 0


# -- status, update, delete ------------------------------------------------------------------

def build_status(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("id", help="a task without children (a parent's status is rolled up)")
    sub.add_argument("status", choices=tasks.STATUSES, help="the new status")
    sub.add_argument("--force", action="store_true", help="mark it done even though a dependency is not done")


def run_status(store: tasks.TaskStore, args: argparse.Namespace) -> int:
    result = store.set_status(args.id, args.status, force=args.force)
    if args.json:
        _cli.emit_json(result)
        return 0
    task = result["task"]
    if result["previous"] == task["status"]:
        print(f"{task['id']} is already {task['status']}")
    else:
        forced = " (forced: dependencies not done)" if args.status == "done" and result["blockedBy"] else ""
        print(f"{task['id']}: {result['previous']} -> {task['status']}{forced}")
    _print_rolled(result["rolledUp"])
    return 0


def build_update(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("id", help="the task to change")
    sub.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                     help="set one field (repeatable): title, description, agent, or a list field "
                          "(dependencies, deliverables, tests, acceptanceCriteria) as a JSON array or comma-separated; "
                          "an empty value clears it")
    sub.add_argument("--patch", metavar="JSON", help="a JSON merge patch (RFC 7386): null removes a field")


def run_update(store: tasks.TaskStore, args: argparse.Namespace) -> int:
    patch: dict[str, Any] = {}
    if args.patch is not None:
        try:
            patch = json.loads(args.patch)
        except ValueError as exc:
            raise errors.InvalidInput(f"--patch is not valid JSON: {exc}",
                                      """e.g. --patch '{"title": "New title", "tests": ["make test"]}'""") from None
        if not isinstance(patch, dict):
            raise errors.InvalidInput("--patch must be a JSON object",
                                      """e.g. --patch '{"agent": "memory:reviewer"}'""")
    for item in args.set:
        key, value = _parse_set(item)
        patch[key] = value
    if not patch:
        raise errors.InvalidInput("nothing to update", "give --set KEY=VALUE or --patch JSON")
    result = store.update(args.id, patch)
    untrusted = _untrusted_tests(store, result["task"])
    if args.json:
        _cli.emit_json({**result, "untrustedTests": untrusted})
    elif result["changed"]:
        print(f"Updated {result['task']['id']}: {', '.join(result['changed'])}")
        _print_trust_note(untrusted if "tests" in result["changed"] else [])
    else:
        print(f"{result['task']['id']} unchanged")
    return 0


def _parse_set(item: str) -> tuple[str, Any]:
    key, equals, value = item.partition("=")
    key = key.strip()
    if not equals or not key:
        raise errors.InvalidInput(f"--set {item!r} is not KEY=VALUE", 'e.g. --set title="New title"')
    if key in tasks.LIST_FIELDS:
        if value.strip().startswith("["):
            try:
                return key, json.loads(value)
            except ValueError as exc:
                raise errors.InvalidInput(f"--set {key}: not a JSON array: {exc}",
                                          f"""e.g. --set '{key}=["a", "b"]' or --set {key}=a,b""") from None
        return key, [part.strip() for part in value.split(",") if part.strip()]
    if key == "validationResults":
        try:
            return key, json.loads(value)
        except ValueError:
            raise errors.InvalidInput("--set validationResults needs a JSON object") from None
    return key, (value if value != "" or key == "title" else None)


def build_delete(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("id", help="the task to delete")
    sub.add_argument("--cascade", action="store_true",
                     help="also delete everything under it and drop it from other tasks' dependencies")


def run_delete(store: tasks.TaskStore, args: argparse.Namespace) -> int:
    result = store.delete(args.id, cascade=args.cascade)
    if args.json:
        _cli.emit_json(result)
        return 0
    print(f"Deleted {', '.join(result['deleted'])}")
    if result["dependantsUpdated"]:
        print(f"Dropped from the dependencies of {', '.join(result['dependantsUpdated'])}")
    _print_rolled(result["rolledUp"])
    return 0


# -- validate, rebuild-index ---------------------------------------------------------------------

def build_validate(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--fix", action="store_true",
                     help="first repair what follows from the ids: parent, children, type and rolled-up status")


def run_validate(store: tasks.TaskStore, args: argparse.Namespace) -> int:
    fixed = store.fix() if args.fix else []
    report = store.check()
    if args.json:
        _cli.emit_json({"ok": not report["problems"], "fixed": fixed, **report})
    else:
        if fixed:
            print(f"Fixed {', '.join(fixed)}")
        for item in report["problems"]:
            print(f"{item['id']}: {item['message']}")
        for item in report["warnings"]:
            sys.stderr.write(f"warning: {item['id']}: {item['message']}\n")
        if not report["problems"]:
            print(f"OK: {report['tasks']} task{'' if report['tasks'] == 1 else 's'}, every invariant holds")
    if report["problems"]:
        count = len(report["problems"])
        _cli.print_error(errors.InvalidInput(
            f"{count} problem{'' if count == 1 else 's'} in the task store",
            "`memory task validate --fix` repairs parents, children, types, rolled-up statuses and task-index.json; "
            "fix the rest with `memory task update` or `memory file write`"))
        return 1
    return 0


def build_trust(sub: argparse.ArgumentParser) -> None:
    sub.epilog = """\
examples:
  memory task trust --list     # every test command of the task files, trusted or not
  memory task trust            # allow exactly these commands to run in this repository
  memory task trust --revoke   # allow none

When a subagent stops, the test commands of its tasks run only when trusted here. The
record lives outside the repository (~/.claude/memory/.cache/task-trust.json), keyed by
the repository's real path, and holds a digest of each command: a command that is new
or changed (a pull, a branch, an edit) is not run until you trust the commands again.
"""
    mode = sub.add_mutually_exclusive_group()
    mode.add_argument("--list", action="store_true", help="show the commands and whether each is trusted")
    mode.add_argument("--revoke", action="store_true", help="forget the commands trusted for this repository")


def run_trust(store: tasks.TaskStore, args: argparse.Namespace) -> int:
    from _lib.tasks import trust as tasktrust

    workspace = store.workspace
    repository = tasktrust.repository(workspace)
    if args.revoke:
        revoked = tasktrust.revoke(workspace)
        if args.json:
            _cli.emit_json({"repository": repository, "revoked": revoked})
        else:
            print(f"No test command is trusted for {repository} any more." if revoked
                  else f"No test command was trusted for {repository}.")
        return 0
    commands = tasktrust.store_commands(store)
    allowed = tasktrust.trusted(workspace)
    new = [command for command in commands if tasktrust.digest(command) not in allowed]
    changed = not args.list and set(map(tasktrust.digest, commands)) != set(allowed)
    if changed:
        tasktrust.trust(workspace, list(commands))
    trusted_now = not args.list
    rows = [{"command": command, "tasks": ids, "trusted": trusted_now or command not in new, "new": command in new}
            for command, ids in commands.items()]
    if args.json:
        _cli.emit_json({"repository": repository, "changed": changed, "commands": rows})
        return 0
    if not rows:
        print(f"No task in {repository} has test commands: nothing to trust.")
        return 0
    print(f"Test commands of the tasks in {repository} (run when a subagent stops):")
    for row in rows:
        mark = "new    " if row["new"] else "trusted"
        print(f"  {mark}  {tasktrust.shown(row['command'])}  ({', '.join(row['tasks'])})")
    if args.list:
        print(f"\n{len(new)} not trusted: `memory task trust` allows them." if new else "\nAll trusted.")
    elif changed:
        print(f"\nTrusted {len(rows)} command{'' if len(rows) == 1 else 's'} for {repository}.")
    else:
        print("\nNothing new to trust.")
    return 0


def build_rebuild(sub: argparse.ArgumentParser) -> None:
    pass


def run_rebuild(store: tasks.TaskStore, args: argparse.Namespace) -> int:
    count = store.rebuild()
    if args.json:
        _cli.emit_json({"tasks": count, "index": str(store.index_path)})
    else:
        print(f"Rebuilt {store.index_path}: {count} task{'' if count == 1 else 's'}")
    return 0


# -- helpers ---------------------------------------------------------------------------------------

def _id_list(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def _fraction(store: tasks.TaskStore, entry: dict[str, Any]) -> str:
    progress = entry.get("progress") or store.progress(entry["id"])
    return f"{progress['completed']}/{progress['total']}"


def _untrusted_tests(store: tasks.TaskStore, task: dict[str, Any]) -> list[str]:
    """The task's test commands not trusted for this repository (they will not run at SubagentStop)."""
    if not task.get("tests"):
        return []
    from _lib.tasks import trust as tasktrust

    return tasktrust.untrusted(store.workspace, tasktrust.test_commands(task))


def _print_trust_note(untrusted: list[str]) -> None:
    if untrusted:
        print("  its test commands run when a subagent stops once you trust them: `memory task trust`")


def _print_rolled(rolled: list[dict[str, Any]]) -> None:
    for item in rolled:
        progress = item["progress"]
        change = "now " if item["statusChanged"] else ""
        print(f"  {item['id']}: {change}{item['status']} ({progress['completed']}/{progress['total']} done)")


COMMANDS = {
    "add": (run_add, build_add, "add an epic, feature or task (the id is assigned)"),
    "show": (run_show, build_show, "show one task with all its fields"),
    "list": (run_list, build_list, "list tasks in WBS order, filtered"),
    "tree": (run_tree, build_tree, "the hierarchy with statuses and progress"),
    "ready": (run_ready, build_ready, "pending tasks whose dependencies are all done: the next work"),
    "status": (run_status, build_status, "set a task's status (pending, in-progress, done) and roll it up"),
    "update": (run_update, build_update, "change fields with --set KEY=VALUE or a JSON merge patch"),
    "delete": (run_delete, build_delete, "delete a task (refused while it has children or dependants)"),
    "validate": (run_validate, build_validate, "check every invariant from the files (exit 1 on a problem)"),
    "rebuild-index": (run_rebuild, build_rebuild, "rebuild task-index.json from tasks/*.json"),
    "trust": (run_trust, build_trust, "allow the tasks' test commands to run in this repository"),
}


if __name__ == "__main__":
    _cli.run(main)
