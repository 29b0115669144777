"""Retention of automatically captured memories (config `retention`).

Only memories the plugin captured itself (`source: capture`: file summaries, subagent
findings, session notes) are ever archived or removed; decisions, learnings, gotchas
and everything else written by people or by Claude on purpose are never touched.

- Session memories older than `retention.session_archive_days` are archived.
- When a scope holds more than `retention.max_nodes` memories, captured ones are removed,
  least connected and oldest first (`least_connected_oldest`; `oldest` ignores links),
  until the scope fits or no captured memory is left.
"""

from __future__ import annotations

import datetime as _dt

from ..base import clock, errors
from . import store
from ..catalog.catalog import open_catalog
from ..workspace.scopes import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Action:
    __slots__ = ("kind", "slug", "scope", "reason")

    def __init__(self, kind: str, slug: str, scope: str, reason: str) -> None:
        self.kind, self.slug, self.scope, self.reason = kind, slug, scope, reason

    def as_json(self) -> dict[str, Any]:
        return {"action": self.kind, "slug": self.slug, "scope": self.scope, "reason": self.reason}


def plan(workspace: Workspace, scope: str | None = None) -> list[Action]:
    """What retention would archive or remove, per the config; changes nothing."""
    settings = workspace.config.section("retention")
    archive_after = int(settings.get("session_archive_days", 7))
    max_nodes = int(settings.get("max_nodes", 500))
    strategy = settings.get("prune_strategy", "least_connected_oldest")
    cutoff = clock.to_iso(clock.now() - _dt.timedelta(days=archive_after))
    actions: list[Action] = []
    for target in workspace.readable_scopes(scope):
        if target.name == "enterprise" or not target.root_writable:
            continue
        with open_catalog(workspace, target) as catalog:
            if catalog is None:
                continue
            captured = [entry for entry in catalog.entries(order="updated") if entry.extra.get("source") == "capture"]
            for entry in captured:
                if entry.type == "session" and entry.status == "active" and entry.updated < cutoff:
                    actions.append(Action("archive", entry.slug, target.name,
                                          f"session older than {archive_after} days"))
            excess = len(catalog.slugs()) - max_nodes
            if excess <= 0:
                continue
            degree = {entry.slug: (len(catalog.edges(entry.slug)) if strategy == "least_connected_oldest" else 0)
                      for entry in captured}
            for entry in sorted(captured, key=lambda item: (degree[item.slug], item.updated))[:excess]:
                actions.append(Action("remove", entry.slug, target.name,
                                      f"scope holds more than {max_nodes} memories; captured, "
                                      f"{degree[entry.slug]} link(s), updated {entry.updated[:10]}"))
    return actions


def apply(workspace: Workspace, actions: list[Action]) -> list[Action]:
    """Carry out a plan; returns the actions done (a memory changed meanwhile is skipped)."""
    done = []
    for action in actions:
        try:
            if action.kind == "archive":
                store.update(workspace, action.slug, store.Changes(fields={"status": "archived"}), scope=action.scope)
            else:
                store.delete(workspace, action.slug, scope=action.scope)
        except errors.Error:
            continue
        done.append(action)
    return done
