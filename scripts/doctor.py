#!/usr/bin/env python3
"""Check that the plugin can work here: interpreter, packages, embedding provider, scopes, hook errors."""

from __future__ import annotations

import sys

import _cli
from _lib.health import doctor

EXAMPLES = """\
examples:
  memory doctor
  memory doctor --json | jq '.findings[] | select(.severity == "problem") | .fix'

Exit 1 when something needs fixing (a problem: a missing package, a failed build of the
plugin's virtualenv, a scope that cannot be written, a hook that crashed in the last 7 days);
warnings (no embedding provider, derived files behind) are worked around. Every finding
comes with the command that fixes it. `memory health` checks the memories themselves.
"""

TITLES = {"interpreter": "Interpreter", "packages": "Packages", "embedding": "Embedding provider",
          "config": "Config", "scopes": "Scopes", "hook log": "Hook log"}


def main(argv: list[str]) -> int:
    parser = _cli.parser("doctor", __doc__.splitlines()[0], EXAMPLES)
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    report = doctor.check()
    if args.json:
        _cli.emit_json(report.as_json())
    else:
        print(render(report))
    if not report.ok:
        problems = report.count(doctor.PROBLEM)
        sys.stderr.write(f"error: memory doctor found {problems} problem{'s' if problems != 1 else ''}\n"
                         "hint: run the fix shown under each problem\n")
        return 1
    return 0


def render(report: doctor.Report) -> str:
    problems, warnings = report.count(doctor.PROBLEM), report.count(doctor.WARNING)
    lines = [f"Memory doctor: {_count(problems, 'problem')}, {_count(warnings, 'warning')}"]
    interpreter = report.sections["interpreter"]
    lines += ["", "Interpreter", f"  {interpreter['path']} (Python {interpreter['version']})",
              f"  chosen: {interpreter['why']}"]
    lines += _findings(report, "interpreter")
    lines += ["", "Packages"]
    for item in report.sections["packages"]:
        version = f" {item['version']}" if item.get("version") else ""
        state = "ok" if item.get("ok") else item.get("problem")
        lines.append(f"  {item['name']}{version} (wants {item.get('wanted') or 'any'}): {state}")
    lines += _findings(report, "packages")
    embedding = report.sections["embedding"]
    lines += ["", "Embedding provider"]
    if embedding["provider"] == "disabled":
        lines.append("  disabled: semantic search uses keyword search")
    else:
        configured = f"  embedding.provider {embedding['provider']}: "
        if embedding["reachable"]:
            status = embedding["status"] or {}
            lines.append(configured + f"{status.get('provider')} embeds with {status.get('model')}"
                         + (f" ({status['dim']} dimensions)" if status.get("dim") else ""))
            if status.get("reason"):
                lines.append(f"  why: {status['reason']}")
        else:
            remembered = " (remembered from a recent check)" if embedding["remembered"] else ""
            lines.append(configured + "no provider is usable" + remembered)
    lines += _findings(report, "embedding")
    lines += _findings(report, "config", heading="Config")
    lines += ["", "Scopes"]
    for scope in report.sections["scopes"]:
        lines.append(f"  {scope['scope']:<10} {scope['path']}")
        if not scope["exists"]:
            lines.append(f"{'':13}not created yet ({'writable' if scope['writable'] else 'not writable'})")
            continue
        lines.append(f"{'':13}{_count(scope['memories'], 'memory', 'memories')}, "
                     f"{'writable' if scope['writable'] else 'read-only'}; {scope['layout']}")
        derived = [f"{name}.json {scope[name]['state']}" for name in ("index", "graph") if scope.get(name)]
        if derived:
            lines.append(f"{'':13}" + ", ".join(derived))
    lines += _findings(report, "scopes")
    log = report.sections["hookLog"]
    lines += ["", f"Hook log ({log['path']})"]
    if not log["errors"]:
        lines.append("  no errors" if log["exists"] else "  empty (no hook has logged anything)")
    lines += _findings(report, "hook log")
    return "\n".join(lines)


def _findings(report: doctor.Report, section: str, heading: str | None = None) -> list[str]:
    found = report.of(section)
    lines = ["", heading] if heading and found else []
    for finding in found:
        lines.append(f"  {finding.severity:<8} {finding.message}")
        lines.append(f"{'':11}fix: {finding.fix}")
    return lines


def _count(number: int, singular: str, plural: str | None = None) -> str:
    return f"{number:,} {singular if number == 1 else plural or singular + 's'}"


if __name__ == "__main__":
    _cli.run(main)
