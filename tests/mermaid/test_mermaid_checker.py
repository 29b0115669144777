"""Proves the Mermaid checker and the label-escaping rules in README.md.

Every diagram here goes through real Mermaid in headless Chromium. The
``mermaid_label`` below is the reference escaper the product should copy.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import pytest

import mermaid_check
from mermaid_check import MermaidChecker, normalize_text

# --- reference escaper (keep in sync with README.md) ----------------------

UNSAFE = frozenset('"#&<>%\\`$|')
# Mermaid's own entity placeholders; "ﬂ°" and "¶ß" are mangled even when escaped.
PLACEHOLDER_PAIRS = (("\ufb02\xb0", "\ufb02\u200b\xb0"), ("\xb6\xdf", "\xb6\u200b\xdf"))
# Mermaid strips the last ";" of a line holding these words, a ":" and a "#".
TRIGGER_WORDS = (("style", "#115;tyle"), ("classDef", "#99;lassDef"))


def mermaid_label(text: str) -> str:
    """Escape arbitrary text for use inside ``["..."]``, ``|"..."|`` or ``-- "..." -->``."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "\ufffd")
    for pair, broken in PLACEHOLDER_PAIRS:
        text = text.replace(pair, broken)
    out = "".join(
        ch if ch == "\n" or (ch not in UNSAFE and ch.isprintable()) else f"#{ord(ch)};"
        for ch in text
    )
    for word, escaped in TRIGGER_WORDS:
        out = out.replace(word, escaped)
    return out if out.strip() else " "


def expected_text(text: str) -> str:
    """What the reader should see for ``text`` once escaped and rendered."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "\ufffd")
    for pair, broken in PLACEHOLDER_PAIRS:
        text = text.replace(pair, broken)
    return normalize_text(text)


TRICKY = [
    'He said "hi" [to] {them} (twice) | pipe',
    "C# issue #12; & &amp; &lt;tag&gt; <b>bold</b> <script>alert(1)</script>",
    "first line\nsecond line\n\nfourth",
    "emoji 😀🎉 ü ß 中文 日本語 — RTL: שלום עולם / مرحبا",
    "cost $5, math $$x^2$$, 100% %%{init: {}}%% `code` ```fence```",
    "back\\slash \\n not a newline, path C:\\temp\\new",
    "style:#abc; classDef x fill:#f96; end subgraph graph --> -.-> ==> :::cls @{ shape: rect }",
    "ligature \ufb02\xb0 pilcrow \xb6\xdf",
    "\t leading and trailing space \u00a0 ",
]


def flowchart(labels: list[str]) -> str:
    """A flowchart using each label as node, pipe-edge and dash-edge label."""
    lines = ["flowchart LR"]
    for i, text in enumerate(labels):
        label = mermaid_label(text)
        lines.append(f'  n{i}["{label}"] -->|"{label}"| m{i}["x"]')
        lines.append(f'  n{i} -- "{label}" --> k{i}')
    lines += ["  classDef hot fill:#f96,stroke:#333,stroke-width:2px", "  class n0,m0 hot"]
    return "\n".join(lines)


def seen(result: mermaid_check.CheckResult, i: int) -> list[str]:
    """Rendered texts of node ``n{i}`` and its two labelled edges, normalized."""
    nodes, edges = result.labels["nodes"], result.labels["edges"]
    texts = [nodes[f"n{i}"]]
    texts += [
        text for key, text in edges.items() if key.startswith((f"L_n{i}_m{i}_", f"L_n{i}_k{i}_"))
    ]
    return [normalize_text(t) for t in texts]


# --- valid diagrams --------------------------------------------------------


def test_tricky_labels_pass_and_render_verbatim(mermaid_checker: MermaidChecker) -> None:
    result = mermaid_checker.check_detailed(flowchart(TRICKY), labels=True)
    assert result.ok, result.error
    assert result.diagram_type == "flowchart-v2"
    assert result.svg_bytes > 1000
    for i, text in enumerate(TRICKY):
        assert seen(result, i) == [expected_text(text)] * 3, text


def test_random_text_round_trips(mermaid_checker: MermaidChecker) -> None:
    """Seeded fuzz: any text, once escaped, parses, renders and reads back unchanged."""
    rng = random.Random(20240601)
    pieces = [chr(c) for c in range(32, 127)] + list(
        "\n\t\r\x00\x1b\xa0\u200d\u0301\u2028\u202e😀ü中שع"
    )
    pieces += ["<br>", "%%", "\n%% c\n", "#quot;", "&amp;", "\\n", "$$", "```", "\nend\n", "-->"]
    pieces += ["style:#a;", "classDef", "\ufb02\xb0", "\xb6\xdf", '"]', '|"', "@{", ":::"]
    for _ in range(40):
        texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 14))) for _ in range(3)]
        result = mermaid_checker.check_detailed(flowchart(texts), labels=True)
        assert result.ok, (texts, result.error)
        for i, text in enumerate(texts):
            assert seen(result, i) == [expected_text(text)] * 3, repr(text)


@pytest.mark.parametrize("node_id", ["n0", "n_12", "N7", "node_3f2a", "o1", "x1", "End", "default"])
def test_safe_node_ids(mermaid_checker: MermaidChecker, node_id: str) -> None:
    diagram = "\n".join(
        [
            "flowchart TD",
            f'  {node_id}["a"] --> n9["b"]',
            f'  n9 -->|"e"| {node_id}',
            f"  class {node_id} hot",
        ]
    )
    result = mermaid_checker.check_detailed(diagram, labels=True)
    assert result.ok, result.error
    assert result.labels["nodes"] == {node_id: "a", "n9": "b"}


# --- invalid diagrams ------------------------------------------------------


@pytest.mark.parametrize(
    "diagram",
    [
        pytest.param('flowchart TD\n  A["unbalanced --> B', id="unbalanced-bracket"),
        pytest.param("flowchart TD\n  A[unbalanced --> B", id="unbalanced-unquoted"),
        pytest.param('flowchart TD\n  A["a "raw" quote"] --> B', id="raw-quote-in-node-label"),
        pytest.param('flowchart TD\n  A -->|"a "raw" quote"| B', id="raw-quote-in-edge-label"),
        pytest.param("flowchart TD\n  A -->|a|b| B", id="raw-pipe-in-unquoted-edge-label"),
        pytest.param('flowchart TD\n  A[""]', id="empty-label"),
        pytest.param('flowchart TD\n  end["x"] --> B', id="reserved-id-end"),
        pytest.param('flowchart TD\n  A["x"] --> subgraph', id="reserved-id-subgraph"),
        pytest.param('flowchart TD\n  A --> B\n  classDef hot fill:"red"', id="bad-classDef"),
        pytest.param("flowchart TD\n  A -> B", id="bad-arrow"),
        pytest.param("not a diagram", id="unknown-type"),
        pytest.param("error", id="error-svg-without-exception"),
    ],
)
def test_invalid_diagrams_fail_with_message(mermaid_checker: MermaidChecker, diagram: str) -> None:
    ok, error = mermaid_checker.check(diagram)
    assert not ok
    assert error and error.startswith(("parse:", "render:")), error


# --- why the escaping is needed -------------------------------------------


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ('he said "hi"', "he said hi"),  # parses! quotes silently dropped
        ("a &amp; b", "a & b"),
        ("a <b>b</b>", "a b"),
        ("issue #35; x", "issue # x"),
        ("a \\n b", "a\nb"),
        ("%%{init: {}}%% x", "x"),
        ("x classDef:#a; y", "x classDef:#a y"),
    ],
)
def test_unescaped_text_is_silently_mangled(
    mermaid_checker: MermaidChecker, raw: str, shown: str
) -> None:
    """These pass the checker yet show other text: only escaping makes them right."""
    result = mermaid_checker.check_detailed(f'flowchart TD\n  A["{raw}"]', labels=True)
    assert result.ok, result.error
    assert normalize_text(result.labels["nodes"]["A"]) == shown
    fixed = mermaid_checker.check_detailed(
        f'flowchart TD\n  A["{mermaid_label(raw)}"]', labels=True
    )
    assert normalize_text(fixed.labels["nodes"]["A"]) == normalize_text(raw)


README_EXAMPLES = [
    ('n0["He said #34;hi#34;"]', 'He said "hi"'),
    ('n0["He said "hi""]', "He said hi"),
    ('n0["a "b" c"]', None),
    ('n0["C#35; #38; #60;T#62;"]', "C# & <T>"),
    ('n0["a &amp; b"]', "a & b"),
    ('n0 -- "implements" --> n1', "implements"),
    ('n0 -->|"implements"| n1', "implements"),
    ("n0 -->|a|b| n1", None),
    ('n0 -->|"a#124;b"| n1', "a|b"),
    ('n0["first\nsecond"]', "first\nsecond"),
    ('n0["😀 שלום 中文"]', "😀 שלום 中文"),
    ('n0[""]', None),
    ('n0[" "]', ""),
    ('n0["x" --> n1', None),
]


@pytest.mark.parametrize(("statement", "shown"), README_EXAMPLES)
def test_readme_examples(
    mermaid_checker: MermaidChecker, statement: str, shown: str | None
) -> None:
    """The example table in README.md: None means a parse error."""
    result = mermaid_checker.check_detailed(f"flowchart LR\n  {statement}", labels=True)
    if shown is None:
        assert not result.ok and result.error and result.error.startswith("parse:")
        return
    assert result.ok, result.error
    labels = result.labels
    assert shown in [
        normalize_text(t) for t in [*labels["nodes"].values(), *labels["edges"].values()]
    ]


# --- the checker itself ----------------------------------------------------


def test_throughput(
    mermaid_checker: MermaidChecker, record_property: Callable[[str, object], None]
) -> None:
    """Reports diagrams/second for a 20-node, 20-edge labelled flowchart."""
    diagram = flowchart([f"node {i} #quot;{i}#quot; 😀" for i in range(7)])
    count = 30
    start = time.perf_counter()
    for _ in range(count):
        assert mermaid_checker.check(diagram) == (True, None)
    rate = count / (time.perf_counter() - start)
    record_property("mermaid_diagrams_per_second", round(rate, 1))
    print(f"\nmermaid checker: {rate:.1f} diagrams/s ({mermaid_checker.versions})")
    assert rate > 1.0  # far below normal; catches a browser launch per diagram


def test_recovers_from_death_and_timeout(mermaid_checker: MermaidChecker) -> None:
    """A dead or stuck process is replaced on the next call (own process, not the shared one)."""
    diagram = "flowchart TD\n  A --> B"
    with MermaidChecker() as checker:
        assert checker.check(diagram) == (True, None)
        assert checker._proc is not None
        checker._proc.kill()
        assert checker.check(diagram) == (True, None)
        checker.timeout = 1e-6  # no render answers this fast: behaves like a hang
        with pytest.raises(mermaid_check.MermaidCheckerError, match="no answer"):
            checker.check(diagram)
        checker.timeout = 60.0
        assert checker.check(diagram) == (True, None)


def test_missing_toolchain_skips_or_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mermaid_check, "unavailable_reason", lambda: "no chromium (test)")
    monkeypatch.delenv(mermaid_check.REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="no chromium"):
        next(mermaid_check.session_checker())
    monkeypatch.setenv(mermaid_check.REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="MEMORY_REQUIRE_MERMAID=1"):
        next(mermaid_check.session_checker())
    with pytest.raises(mermaid_check.MermaidCheckerError, match="no chromium"):
        MermaidChecker().start()
