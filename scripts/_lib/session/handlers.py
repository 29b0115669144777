"""The hooks' logic: one function per hook script, `handler(payload, run) -> JSON to print or None`.

`payload` is Claude Code's JSON input (a dict), `run` the HookRun (environment, log, workspace,
session). hooks/<name>.py only reads stdin, calls its handler and prints (hooks/_hook.py), so the
handlers can be called in-process. Each imports what it needs when called: a hook process loads
only its own handler's modules.
"""

from __future__ import annotations


from .hookio import additional_context
from .prompts import is_design_question, is_task_notification

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .hookio import HookRun

    Answer = dict[str, Any] | None

EDIT_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
LIST_LIMIT = 500  # files changed and memories written kept per session
EDITS_BEFORE_REMINDER = 5
PROMPTS_BETWEEN_SKILL_REMINDERS = 6
SKILL_REMINDER = ("Memory: {edits} file edits since the last memory was saved. If this work settled a decision, "
                  "taught a lesson or hit a pitfall worth knowing next time, record it: "
                  '`memory write "<title>" --type decision|learning|gotcha --tags <a,b> '
                  '--content "<what and why>"`.')
PROMPTS_BETWEEN_THINK_REMINDERS = 10
THINK_REMINDER = ("Memory: this looks like a design decision. `memory think \"<question>\" --option \"A: pros/cons\" "
                  "--option \"B: ...\" --conclusion \"...\"` records the deliberation and its conclusion as a "
                  "decision memory; `memory search <topic>` shows what was decided before.")


# -- PostToolUse (Read) --------------------------------------------------------------------------

def memory_context(payload: dict[str, Any], run: HookRun) -> Answer:
    """Gotchas relevant to the file just read, each once per session."""
    tool_input = payload.get("tool_input")
    path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if not isinstance(path, str) or not path:
        return None
    from . import gotchas, guard
    from .output import shell_quote

    workspace, cwd = run.workspace(payload, notices=True)
    if guard.protected_scope(workspace, path, cwd):
        return None  # reading a memory file itself
    limit = int(workspace.config.get("injection.gotchas_per_read", 3))
    session = run.session(payload)
    subject = gotchas.relative_path(path, str(workspace.project_dir))

    def pick(state: dict[str, Any]) -> str:
        return gotchas.warnings_once(workspace, state, lambda shown: gotchas.for_path(
            workspace, path, limit=limit, exclude=shown), subject, f"memory gotchas --path {shell_quote(subject)}")

    return additional_context("PostToolUse", session.update(pick) if session else pick({}), workspace)


def capture_file_summary(payload: dict[str, Any], run: HookRun) -> Answer:
    """Create or refresh a file-summary memory when a large source file is read."""
    tool_input = payload.get("tool_input")
    path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if not isinstance(path, str) or not path:
        return None
    from . import capture, guard

    workspace, cwd = run.workspace(payload)
    if not guard.protected_scope(workspace, path, cwd):
        capture.refresh_file_summary(workspace, path)
    return None


# -- PostToolUse / PostToolUseFailure (Bash) -----------------------------------------------------

def is_memory_command(command: str) -> bool:
    """`memory ...` or `.../bin/memory ...` (e.g. "${CLAUDE_PLUGIN_ROOT}/bin/memory"): the plugin itself."""
    program = command.split(None, 1)[0].strip("\"'")
    return program == "memory" or program.endswith("/bin/memory")


def command_output(payload: dict[str, Any]) -> str:
    """What a Bash call printed: stdout and stderr, then PostToolUseFailure's "Exit code N\\n<stderr>"."""
    response = payload.get("tool_response")
    output = ""
    if isinstance(response, dict):
        output = "\n".join(str(response.get(key) or "") for key in ("stdout", "stderr"))
    elif isinstance(response, str):
        output = response
    if isinstance(payload.get("error"), str):
        output = "\n".join(filter(None, (output, payload["error"])))
    return output


def memory_context_bash(payload: dict[str, Any], run: HookRun) -> Answer:
    """Gotchas relevant to the command and to errors in its output."""
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str) or not command.strip() or is_memory_command(command):
        return None
    from . import gotchas
    from .output import shell_quote

    output = command_output(payload)
    event = "PostToolUseFailure" if payload.get("hook_event_name") == "PostToolUseFailure" else "PostToolUse"
    workspace, _ = run.workspace(payload, notices=True)
    limit = int(workspace.config.get("injection.gotchas_per_read", 3))
    session = run.session(payload)
    first = command.strip().splitlines()[0]
    subject = f"`{first[:80]}{'...' if len(first) > 80 else ''}`"

    def pick(state: dict[str, Any]) -> str:
        return gotchas.warnings_once(workspace, state, lambda shown: gotchas.for_command(
            workspace, command, output, limit=limit, exclude=shown), subject,
            f"memory gotchas --command {shell_quote(first[:200])}")

    # with no gotcha, still what the command deleted from memory, if anything
    return additional_context(event, session.update(pick) if session else pick({}), workspace)


# -- PostToolUse (Write, Edit, MultiEdit, NotebookEdit, Bash) ------------------------------------

def clear_memory_check_flag(payload: dict[str, Any], run: HookRun) -> Answer:
    """Count edits (for the skill reminder), and clear the count when a memory is captured; keep the
    files changed and the memories written for the session memory."""
    session = run.session(payload)
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if session is None or not isinstance(tool_input, dict):
        return None
    if tool in EDIT_TOOLS:
        path = tool_input.get(EDIT_TOOLS[tool])
        if isinstance(path, str) and path:
            session.update(lambda state: note_edit(state, path))
    elif tool == "Bash":
        command = tool_input.get("command")
        if isinstance(command, str) and captures_memory(command):
            response = payload.get("tool_response")
            output = str(response.get("stdout") or "") if isinstance(response, dict) else str(response or "")
            session.update(lambda state: note_capture(state, memories_reported(output)))
    return None


def captures_memory(command: str) -> bool:
    """Whether a shell command runs `memory write|update|link|think|commit`."""
    import re

    return re.search(r"(?:^|[\s;&|/'\"])memory['\"]?\s+(write|update|link|think|commit)\b", command) is not None


def memories_reported(output: str) -> list[str]:
    """The slugs a `memory` command reported as created or updated."""
    import re

    return re.findall(r"^(?:Created|Updated) ([a-z0-9]+(?:-[a-z0-9]+)*) ", output, re.M)


def note_edit(state: dict[str, Any], path: str) -> None:
    state["edits_since_capture"] = int(state.get("edits_since_capture") or 0) + 1
    files = state.setdefault("files_changed", [])
    if path not in files and len(files) < LIST_LIMIT:
        files.append(path)


def note_capture(state: dict[str, Any], slugs: list[str]) -> None:
    state["edits_since_capture"] = 0
    written = state.setdefault("memories_written", [])
    for slug in slugs:
        if slug not in written and len(written) < LIST_LIMIT:
            written.append(slug)


# -- PostToolUse (TodoWrite) ---------------------------------------------------------------------

def todowrite_capture(payload: dict[str, Any], run: HookRun) -> Answer:
    """Mirror Claude's todo list into the project's task store (see hooks/todowrite-capture.py)."""
    if payload.get("tool_name") != "TodoWrite":
        return None
    tool_input = payload.get("tool_input")
    todos = tool_input.get("todos") if isinstance(tool_input, dict) else None
    session_id = payload.get("session_id")
    if not isinstance(todos, list) or not isinstance(session_id, str) or not session_id.strip():
        return None
    from ..tasks import validation as taskhooks
    from . import capture

    session = run.session(payload)
    if session is not None:  # for the session memory's tasks done and open threads
        session.update(lambda state: capture.note_todos(state, todos))
    workspace, _ = run.workspace(payload)  # an invalid config falls back to the defaults
    if workspace.project_is_global or not (workspace.in_git_repo or workspace.project_root.is_dir()):
        return None  # not a project: nothing of the session belongs in a project's task store
    if workspace.config.get("capture.capture_todos", True) is False:
        return None
    taskhooks.capture_todos(workspace, session_id.strip(), todos)
    return None


# -- PreToolUse (Write, Edit, MultiEdit, NotebookEdit, Bash) -------------------------------------

def protect_memory_directory(payload: dict[str, Any], run: HookRun) -> Answer:
    """Deny direct changes to the memory directories (the rules: guard, bashguard)."""
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    from . import guard

    workspace, cwd = run.workspace(payload)
    reason = guard.check(workspace, str(payload.get("tool_name") or ""), tool_input, cwd)
    if not reason:
        return None
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}


# -- UserPromptSubmit ----------------------------------------------------------------------------

def memory_prompt_context(payload: dict[str, Any], run: HookRun) -> Answer:
    """The memories most relevant to the prompt, each once per session unless changed."""
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip() or is_task_notification(prompt):
        return None
    from . import injection

    workspace, _ = run.workspace(payload, notices=True)
    session = run.session(payload)

    def pick(state: dict[str, Any]) -> str:
        seen = state.setdefault("injected", {})
        text, shown = injection.prompt_context(workspace, prompt, seen, state)
        seen.update(shown)
        return text

    text = session.update(pick) if session else pick({})
    return additional_context("UserPromptSubmit", text, workspace)


def memory_skill_reminder(payload: dict[str, Any], run: HookRun) -> Answer:
    """After significant edits with no memory captured, a short nudge to capture one."""
    prompt = payload.get("prompt")
    session = run.session(payload)
    if session is None or not isinstance(prompt, str) or is_task_notification(prompt):
        return None
    edits = session.update(skill_reminder_due)
    return additional_context("UserPromptSubmit", SKILL_REMINDER.format(edits=edits)) if edits else None


def skill_reminder_due(state: dict[str, Any]) -> int:
    """Count this prompt; the edits since the last capture when a reminder is due now, else 0."""
    state["prompts"] = int(state.get("prompts") or 0) + 1
    edits = int(state.get("edits_since_capture") or 0)
    last = int(state.get("skill_reminded_at") or -PROMPTS_BETWEEN_SKILL_REMINDERS)
    if edits >= EDITS_BEFORE_REMINDER and state["prompts"] - last >= PROMPTS_BETWEEN_SKILL_REMINDERS:
        state["skill_reminded_at"] = state["prompts"]
        return edits
    return 0


def memory_think_reminder(payload: dict[str, Any], run: HookRun) -> Answer:
    """When the prompt asks for a design decision, suggest `memory think` (rarely)."""
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or is_task_notification(prompt) or not is_design_question(prompt):
        return None
    session = run.session(payload)
    if session is None:
        return additional_context("UserPromptSubmit", THINK_REMINDER)
    return additional_context("UserPromptSubmit", THINK_REMINDER) if session.update(think_reminder_due) else None


def think_reminder_due(state: dict[str, Any]) -> bool:
    """Count this design question; whether the reminder is due (the first, then every tenth)."""
    prompts = int(state.get("think_prompts") or 0) + 1
    state["think_prompts"] = prompts
    last = state.get("think_reminded_at")
    if last is None or prompts - int(last) >= PROMPTS_BETWEEN_THINK_REMINDERS:
        state["think_reminded_at"] = prompts
        return True
    return False


# -- SessionStart --------------------------------------------------------------------------------

def start_memory_index(payload: dict[str, Any], run: HookRun) -> Answer:
    """A compact summary of what memory holds (after a compaction, with the notes kept before it)."""
    from ..base import clock
    from ..ops import entrypoint
    from . import injection

    export_interpreter(run)
    workspace, _ = run.workspace(payload, notices=True)
    state: dict[str, Any] = {}
    session = run.session(payload)
    if session:
        state = session.update(lambda current: current.setdefault("started", clock.now_iso()) and current)
    extra = ""
    if payload.get("source") == "compact" and state.get("compact_notes"):
        extra = "## Before compaction this session\n" + state["compact_notes"]
    summary = injection.session_start(workspace, open_tasks=entrypoint.open_tasks(workspace), extra=extra)
    return additional_context("SessionStart", summary, workspace)


def export_interpreter(run: HookRun) -> None:
    """Let `memory` in the Bash tool use the interpreter the bootstrap hook records: bin/memory reads
    it from the data directory when called, so one the bootstrap records later in the session counts."""
    from ..workspace import runtime
    from .state import data_dir

    env_file = run.env.get("CLAUDE_ENV_FILE")
    if not env_file:
        return
    try:
        with open(env_file, "a", encoding="utf-8") as handle:
            handle.write(f"export {runtime.DATA_ENV}={runtime.quote(str(data_dir(run.env)))}\n")
    except OSError as exc:
        run.log(f"cannot write CLAUDE_ENV_FILE: {exc}")


def maintenance(payload: dict[str, Any], run: HookRun) -> Answer:
    """Housekeeping that must not delay the session (async): memory files edited in place by hand
    (every file's stamp checked), retention of captured memories, the project's index.md, and the
    hook state of sessions idle for two weeks."""
    if payload.get("source") not in (None, "startup"):
        return None
    from ..base import errors
    from ..catalog import catalog
    from ..ops import entrypoint, retention
    from .state import prune_stale

    workspace, _ = run.workspace(payload)
    try:
        catalog.catch_up(workspace, full=True)
        done = retention.apply(workspace, retention.plan(workspace))
        if done:
            run.log(f"retention: {len(done)} captured memories archived or removed")
        entrypoint.refresh(workspace)
    except errors.Error as exc:
        run.log(f"maintenance skipped: {exc.message}")
    prune_stale(run.env)
    return None


def bootstrap(payload: dict[str, Any], run: HookRun) -> Answer:
    """Give the hooks and `memory` a Python that has the plugin's requirements (see session/bootstrap)."""
    from . import bootstrap as runtime_bootstrap

    runtime_bootstrap.ensure(run)
    return None


# -- PreCompact, SubagentStop, SessionEnd ---------------------------------------------------------

def pre_compact_memory(payload: dict[str, Any], run: HookRun) -> Answer:
    """Write the session memory now and keep a short note for SessionStart(compact) to put back."""
    session = run.session(payload)
    if session is None:
        return None
    from . import capture

    workspace, _ = run.workspace(payload)
    state = session.load()
    slug = capture.write_session_memory(workspace, session.id, state)
    summary = capture.compact_notes(state, slug)
    session.update(lambda current: current.update(compact_notes=summary, session_memory=slug))
    return None


def capture_subagent(payload: dict[str, Any], run: HookRun) -> Answer:
    """Keep a subagent's final report as a discovery memory."""
    agent = payload.get("agent_type")
    message = payload.get("last_assistant_message")
    if not isinstance(agent, str) or not agent.strip() or not isinstance(message, str):
        return None  # compaction fires SubagentStop with an empty agent_type: not a finding
    from . import capture

    workspace, _ = run.workspace(payload)
    slug = capture.record_discovery(workspace, agent.strip(), message, payload.get("session_id"))
    session = run.session(payload)
    if slug and session is not None:
        session.update(lambda state: capture.note_written(state, slug))
    return None


def subagent_validation(payload: dict[str, Any], run: HookRun) -> Answer:
    """Validate the in-progress tasks assigned to the agent that stopped (see hooks/subagent-validation.py)."""
    agent = payload.get("agent_type")
    if not isinstance(agent, str) or not agent.strip():
        return None
    from ..tasks import validation as taskhooks

    workspace, _ = run.workspace(payload)
    if workspace.project_is_global or not (workspace.project_root / "tasks").is_dir():
        return None
    timeout = run.env.get("CLAUDE_MEMORY_TASK_TEST_TIMEOUT")
    outcomes = taskhooks.validate_agent_tasks(workspace, agent.strip(),
                                              test_timeout=float(timeout) if timeout else None)
    refused: dict[str, list[str]] = {}
    for outcome in outcomes:
        if outcome.get("untrusted"):
            refused[outcome["id"]] = outcome["untrusted"]
            run.log(f"did not validate task {outcome['id']} for {agent}: "
                    f"{len(outcome['untrusted'])} test command(s) not trusted")
            continue
        run.log(f"validated task {outcome['id']} for {agent}: tests {'pass' if outcome['testsPass'] else 'fail'}, "
                f"deliverables {'present' if outcome['deliverablesExist'] else 'missing'}"
                + (", marked done" if outcome["done"] else ""))
    if refused:
        from ..tasks import trust as tasktrust

        return {"systemMessage": tasktrust.refusal(workspace, refused)}
    return None


def end_memory(payload: dict[str, Any], run: HookRun) -> Answer:
    """Finish the session memory and forget the session's state (within SessionEnd's ~1.5 s budget);
    the notes were gathered during the session by the other hooks."""
    session = run.session(payload)
    if session is None:
        return None
    from . import capture

    workspace, _ = run.workspace(payload)
    capture.write_session_memory(workspace, session.id, session.load())
    if payload.get("reason") not in ("resume",):  # a resumed session keeps counting
        session.remove()
    return None


HANDLERS = {name.replace("_", "-"): handler for name, handler in (
    ("memory_context", memory_context), ("capture_file_summary", capture_file_summary),
    ("memory_context_bash", memory_context_bash), ("clear_memory_check_flag", clear_memory_check_flag),
    ("todowrite_capture", todowrite_capture), ("protect_memory_directory", protect_memory_directory),
    ("memory_prompt_context", memory_prompt_context), ("memory_skill_reminder", memory_skill_reminder),
    ("memory_think_reminder", memory_think_reminder), ("start_memory_index", start_memory_index),
    ("maintenance", maintenance), ("bootstrap", bootstrap), ("pre_compact_memory", pre_compact_memory),
    ("capture_subagent", capture_subagent), ("subagent_validation", subagent_validation),
    ("end_memory", end_memory))}  # hook script name -> handler
