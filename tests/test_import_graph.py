"""The import graph of ``relu_gating/`` and ``solvers/`` has no cycles, between modules or between packages,
and private modules and private names stay home.

The graph is read from the source with :mod:`ast`, not by importing anything.  Every import
statement counts wherever it stands: at the top of a module, inside a function (a deferred
import is still a dependency, and a cycle hidden in a function is still a cycle), and under
``if TYPE_CHECKING:``.  An edge goes to the module an import names (``from a.b import c`` is
an edge to ``a.b.c`` when ``c`` is a module, else to ``a.b``), as import-linter's graph does;
the implicit import of parent packages is not an edge (else every package ``__init__`` that
re-exports a submodule would close a cycle with it).  Imports outside the two packages
(numpy, scipy, ...) are ignored.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("relu_gating", "solvers")

#: Cycles tolerated: none (the test below fails on an entry that no longer matches, so the list can only shrink).
KNOWN_CYCLES: list[list[str]] = []

#: Private modules imported from outside their package: none (each became a public name of its package).
#: A new leak fails; the list stays empty.
KNOWN_LEAKS: set[str] = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def _resolve(name: str, level: int, here: str, is_package: bool) -> str:
    """The absolute name of ``from <level dots><name> import ...`` written in module ``here``."""
    if level == 0:
        return name
    base = here.split(".") if is_package else here.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _targets(node: ast.AST, here: str, is_package: bool, modules: dict[str, Path]) -> set[str]:
    """The modules of the two packages that one import statement depends on."""
    out: set[str] = set()
    if isinstance(node, ast.Import):
        out = {a.name for a in node.names}
    elif isinstance(node, ast.ImportFrom):
        base = _resolve(node.module or "", node.level, here, is_package)
        for a in node.names:
            sub = f"{base}.{a.name}"
            out.add(sub if sub in modules else base)
    found = set()
    for name in out:
        while name and name not in modules:  # ``import a.b.c`` where c is not a module: a.b
            name = name.rpartition(".")[0]
        if name:
            found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ``relu_gating`` and ``solvers`` it imports (anywhere in its body)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        deps: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                deps |= _targets(node, name, is_package, modules)
        deps.discard(name)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:  # recursion depth is bounded by the number of modules (~200)
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _package_of(module: str, modules: dict[str, Path]) -> str:
    """The innermost package that owns ``module``'s privacy: the parent of its first ``_x`` part."""
    parts = module.split(".")
    for i, p in enumerate(parts):
        if p.startswith("_") and not p.startswith("__"):
            return ".".join(parts[:i])
    return ""


def private_leaks(graph: dict[str, set[str]]) -> list[str]:
    """Imports of a private module (``pkg._x`` or below) from outside its package ``pkg``."""
    modules = _modules()
    leaks = []
    for src, deps in graph.items():
        for dst in deps:
            owner = _package_of(dst, modules)
            if owner and not (src == owner or src.startswith(owner + ".")):
                leaks.append(f"{src} -> {dst}")
    return sorted(leaks)


def test_the_graph_is_read():
    g = import_graph()
    assert "relu_gating.search.front" in g and "solvers" in g
    assert "relu_gating.search.options" in g["relu_gating.search.front"]
    assert "relu_gating.search.strategy" in g["relu_gating.search.front"]  # a function-level import counts


def test_the_cycle_finder_finds_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    found = cycles(import_graph())
    new = [c for c in found if c not in KNOWN_CYCLES]
    assert not new, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in new)
    gone = [c for c in KNOWN_CYCLES if c not in found]
    assert not gone, f"cycles fixed or changed: update KNOWN_CYCLES: {gone}"


def package_of(module: str) -> str:
    """The package a module counts for in the package graph: its top-level sub-package
    (``relu_gating.search.bnb._search`` -> ``relu_gating.search``, ``solvers._verified.realize`` ->
    ``solvers._verified``); a module at the root (``relu_gating.errors``, ``solvers.cone``) and the root
    package itself (``relu_gating``: its ``__init__``, the lazy public API) are their own nodes."""
    return ".".join(module.split(".")[:2])


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Package -> the packages its modules import (:func:`package_of`), self-edges dropped."""
    out: dict[str, set[str]] = {}
    for src, deps in graph.items():
        p = package_of(src)
        out.setdefault(p, set()).update(package_of(d) for d in deps)
        out[p].discard(p)
    return out


def test_the_package_graph_collapses_modules_into_top_level_packages():
    g = {"r.a.x": {"r.b.y"}, "r.b.y": {"r.b.z"}, "r.b.z": {"r.a.w"}, "r.a.w": set(), "r.e": set()}
    assert package_graph(g) == {"r.a": {"r.b"}, "r.b": {"r.a"}, "r.e": set()}
    assert cycles(package_graph(g)) == [["r.a", "r.b"]]  # no module cycle, but a package cycle


def test_no_package_cycles():
    """0 cycles between the top-level packages (``coverage`` <-> ``layers`` <-> ``search`` was one, through
    ``coverage/variation.py``, now ``layers/variation.py``, and ``search/from_samples.py``'s ``layer_input``)."""
    found = cycles(package_graph(import_graph()))
    assert not found, "package cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_solvers_never_imports_relu_gating():
    g = import_graph()
    bad = sorted(f"{m} -> {d}" for m, deps in g.items() if m.split(".")[0] == "solvers"
                 for d in deps if d.split(".")[0] == "relu_gating")
    assert not bad, bad


def test_patterns_never_imports_search():
    g = import_graph()
    bad = sorted(f"{m} -> {d}" for m, deps in g.items() if m.startswith("relu_gating.patterns")
                 for d in deps if d.startswith("relu_gating.search"))
    assert not bad, bad


def test_private_modules_stay_inside_their_package():
    assert private_leaks({"a.b": {"a._c.d"}, "a._c.e": {"a._c.d"}, "x": {"a._c"}}) == ["x -> a._c"]
    leaks = set(private_leaks(import_graph()))
    new = sorted(leaks - KNOWN_LEAKS)
    assert not new, "private modules imported from outside their package:\n" + "\n".join(new)
    gone = sorted(KNOWN_LEAKS - leaks)
    assert not gone, f"leaks fixed: remove them from KNOWN_LEAKS: {gone}"


def private_names_across_packages() -> list[str]:
    """``from pkg.mod import _name`` written outside ``pkg`` (the package that holds ``mod``): a private
    name reached across packages (``bnb/_chamber.py``'s ``_excluded`` and ``bnb/_score.py``'s
    ``_bound_matrix`` were two)."""
    modules = _modules()
    found = []
    for here, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in modules):
                continue
            owner = node.module if modules[node.module].name == "__init__.py" else node.module.rpartition(".")[0]
            if here == owner or here.startswith(owner + "."):
                continue
            found += [f"{here}: {node.module}.{a.name}" for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]
    return sorted(found)


def test_no_private_name_is_imported_across_packages():
    found = private_names_across_packages()
    assert not found, "private names imported from another package:\n" + "\n".join(found)


#: Top-level test files that still import private modules or names (the rule of tests/internals/README.md:
#: only tests/internals/ may). Each should move there or use the public API; a new one fails.
KNOWN_PRIVATE_TESTS: set[str] = set()  # every top-level test uses public names only


def _imports_private(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] in PACKAGES and any(p.startswith("_") and not p.startswith("__") for p in parts):
                return True
    return False


def test_only_tests_internals_import_private_names():
    found = {p.name for p in sorted((ROOT / "tests").glob("test_*.py")) if _imports_private(p)}
    assert not found - KNOWN_PRIVATE_TESTS, f"move to tests/internals/: {sorted(found - KNOWN_PRIVATE_TESTS)}"
    assert not KNOWN_PRIVATE_TESTS - found, f"fixed: remove from the list: {sorted(KNOWN_PRIVATE_TESTS - found)}"
