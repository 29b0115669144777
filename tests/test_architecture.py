"""The layering of scripts/_lib, read from the source (no import runs).

Packages are ranked; a module may import only from its own package or a lower
rank. health and session share a rank and are peers: neither imports the other.
Imports inside functions count the same as module-level ones: an import put in a
function is there for speed, never to hide a cycle, so no cycle between modules
is allowed either. Imports under `if TYPE_CHECKING:` never run, so they take part
in the rank rule (they still say which way a dependency points) but not in cycles.

Only the catalog package talks to SQLite: a schema change then touches one package.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIB = ROOT / "scripts" / "_lib"

RANKS = {
    "base": 0,
    "workspace": 1,
    "model": 2,
    "catalog": 3,
    "tasks": 4,
    "vectors": 5,
    "ops": 6,
    "health": 7,
    "session": 7,
}


def module_name(path: Path) -> str:
    """`_lib.ops.store` for scripts/_lib/ops/store.py, `_lib.ops` for its __init__."""
    parts = ("_lib",) + path.relative_to(LIB).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {module_name(path): path for path in sorted(LIB.rglob("*.py"))}


def package_of(module: str) -> str | None:
    """The ranked package a module belongs to (None for `_lib` itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(module: str, path: Path):
    """(line, imported _lib module, runs at runtime) for every import of a _lib module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []

    def target(name: str) -> str | None:
        # the deepest _lib module a dotted name reaches (`_lib.x.y.Name` -> `_lib.x.y`)
        while name:
            if name in MODULES:
                return name
            name = name.rpartition(".")[0]
        return None

    def visit(node: ast.AST, runtime: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and is_type_checking(child.test):
                for stmt in child.body:
                    visit_stmt(stmt, False)
                for stmt in child.orelse:
                    visit_stmt(stmt, runtime)
                continue
            visit_stmt(child, runtime)

    def visit_stmt(node: ast.AST, runtime: bool) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "_lib" or alias.name.startswith("_lib."):
                    hit = target(alias.name)
                    if hit:
                        found.append((node.lineno, hit, runtime))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            if origin == "_lib" or origin.startswith("_lib."):
                for alias in node.names:
                    hit = target(f"{origin}.{alias.name}")
                    if hit:
                        found.append((node.lineno, hit, runtime))
        visit(node, runtime)

    visit(tree, True)
    return found


GRAPH = {module: imports_of(module, path) for module, path in MODULES.items()}


def where(module: str, line: int) -> str:
    return f"{MODULES[module].relative_to(ROOT)}:{line}"


def test_every_module_is_in_a_ranked_package() -> None:
    stray = [m for m in MODULES if m != "_lib" and package_of(m) not in RANKS]
    assert not stray, f"modules outside the ranked packages {sorted(RANKS)}: {stray}"


def test_imports_only_go_down_the_layers() -> None:
    upward = []
    for module, imports in GRAPH.items():
        mine = package_of(module)
        if mine is None:
            continue
        for line, imported, _runtime in imports:
            theirs = package_of(imported)
            if theirs is None or theirs == mine:
                continue
            if RANKS[theirs] >= RANKS[mine]:
                upward.append(f"{where(module, line)}: {mine} (rank {RANKS[mine]}) imports "
                              f"{imported} ({theirs}, rank {RANKS[theirs]})")
    assert not upward, "imports that do not go down the layers:\n" + "\n".join(upward)


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively: the components with more than one module or a self-import."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in graph[node]:
                        components.append(sorted(component))
    return components


def test_no_import_cycles_between_modules() -> None:
    graph = {m: {imported for _line, imported, runtime in imports if runtime and imported != "_lib"}
             for m, imports in GRAPH.items()}
    cycles = []
    for component in strongly_connected(graph):
        members = set(component)
        edges = sorted({f"  {where(m, line)} imports {imported}"
                        for m in component for line, imported, runtime in GRAPH[m]
                        if runtime and imported in members})
        cycles.append(f"cycle between {', '.join(component)}:\n" + "\n".join(edges))
    assert not cycles, "import cycles (a function-level import counts too):\n" + "\n".join(cycles)


# Talking to SQLite: the connection attribute, running statements, the sqlite3 module
# (read from the syntax tree, so prose in comments and docstrings does not count).
SQL_ATTRIBUTES = {"conn", "execute", "executemany", "executescript"}

# Modules outside catalog/ that still run SQL, each on its way into the catalog package.
def sql_uses(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in SQL_ATTRIBUTES:
            lines.append(node.lineno)
        elif isinstance(node, ast.Name) and node.id == "sqlite3":
            lines.append(node.lineno)
        elif isinstance(node, ast.Import) and any(a.name.split(".")[0] == "sqlite3" for a in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sqlite3":
            lines.append(node.lineno)
    return sorted(set(lines))


def test_only_the_catalog_package_talks_to_sqlite() -> None:
    catalog = LIB / "catalog"
    sources = [p for p in sorted((ROOT / "scripts").rglob("*.py")) + sorted((ROOT / "hooks").rglob("*.py"))
               if catalog not in p.parents]
    offending = []
    for path in sources:
        relative = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8").splitlines()
        offending += [f"{relative}:{n}: {text[n - 1].strip()}" for n in sql_uses(path)]
    assert not offending, "SQL outside scripts/_lib/catalog/:\n" + "\n".join(offending)



def test_no_test_module_imports_another() -> None:
    """Shared test code lives in helpers, fixtures and corpus modules, never in a test module."""
    offending = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offending += [f"{path.relative_to(ROOT)}:{node.lineno}: {name}" for name in names
                          if name.split(".")[-1].startswith("test_")]
    assert not offending, "test modules importing test modules:\n" + "\n".join(offending)


# What a module computes at import must not depend on the process: the hook server imports
# _lib once and forks a child per hook, with that hook's environment, directory and files.
PROCESS_STATE = {"environ", "environb", "getenv", "getcwd", "open", "read_text", "read_bytes", "stat",
                 "exists", "is_file", "is_dir", "listdir", "scandir", "time", "now", "getpid", "getuid"}


def import_time_statements(tree: ast.Module):
    """The statements that run at import: module level and class bodies, not function bodies."""
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(node, ast.ClassDef):
            pending += node.body
            continue
        if isinstance(node, ast.If) and is_type_checking(node.test):
            continue
        yield node


def test_no_module_reads_the_process_at_import() -> None:
    offending = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for statement in import_time_statements(tree):
            for node in ast.walk(statement):
                name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
                if name in PROCESS_STATE and not isinstance(node.ctx if hasattr(node, "ctx") else None, ast.Store):
                    offending.append(f"{module}:{node.lineno}: {name}")
    assert not offending, "reads the process's environment, files or clock at import:\n" + "\n".join(offending)
