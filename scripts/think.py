#!/usr/bin/env python3
"""Deliberate on a question (options, pros, cons) and record the conclusion as a decision memory."""

from __future__ import annotations

import argparse

import _cli
from _lib.model import memory
from _lib.ops import think
from _lib.workspace.scopes import Workspace

EXAMPLES = """\
examples:
  memory think "Which store for user sessions?" \\
      --option "Redis" --pro "sub-millisecond reads" --pro "TTL built in" --con "one more service" \\
      --option "Postgres table" --pro "no new infrastructure" --con "slower, needs a cleanup job" \\
      --choose Redis --conclusion "Use Redis for sessions: latency matters more than one more service." \\
      --tags sessions,cache

  memory think "Monorepo or not?" --option "Monorepo" --option "Polyrepo"     # open: no conclusion yet

Writes a deliberation memory (type artifact, tag deliberation) and, when there is a
conclusion, a decision memory with its rationale (the chosen option's pros), trade-offs
(its cons) and the alternatives, linked both ways (deliberated-in / concluded-in).
"""


class OptionAction(argparse.Action):
    """--option NAME starts an option; --pro/--con attach to the last one."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, value: object,
                 option_string: str | None = None) -> None:
        options = getattr(namespace, "options", None) or []
        if self.dest == "options":
            options.append(think.Option(str(value)))
        else:
            if not options:
                parser.error(f"{option_string} must follow an --option")
            (options[-1].pros if self.dest == "pro" else options[-1].cons).append(str(value))
        namespace.options = options


def main(argv: list[str]) -> int:
    parser = _cli.parser("think", __doc__.splitlines()[0], EXAMPLES)
    parser.add_argument("question", help="the question being decided")
    parser.add_argument("--option", dest="options", action=OptionAction, metavar="NAME", default=[],
                        help="an option considered (repeatable)")
    parser.add_argument("--pro", dest="pro", action=OptionAction, metavar="TEXT", help="an advantage of the last --option")
    parser.add_argument("--con", dest="con", action=OptionAction, metavar="TEXT", help="a drawback of the last --option")
    parser.add_argument("--choose", metavar="NAME", help="the option decided on")
    parser.add_argument("--conclusion", help="the decision and why (becomes a decision memory)")
    parser.add_argument("--tags", help="comma-separated tags for both memories")
    _cli.add_scope(parser, "where to store them (default scope when omitted)")
    _cli.add_json(parser)
    args = parser.parse_args(argv)
    workspace = Workspace()
    outcome = think.deliberate(workspace, args.question, args.options, conclusion=args.conclusion,
                               choose=args.choose, tags=memory.parse_tags(args.tags) if args.tags else None,
                               scope=args.scope)
    _cli.print_warnings(workspace.warnings)
    if args.json:
        _cli.emit_json(outcome.as_json())
        return 0
    print(f"Recorded deliberation {outcome.deliberation.slug} ({outcome.deliberation.scope} scope)")
    if outcome.decision:
        print(f"Recorded decision {outcome.decision.slug}, linked: "
              f"{outcome.decision.slug} -[deliberated-in]-> {outcome.deliberation.slug}")
    else:
        print("No conclusion yet: run `memory think` again with --conclusion when it is decided.")
    return 0


if __name__ == "__main__":
    _cli.run(main)
