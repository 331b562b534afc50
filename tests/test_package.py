"""The package's shape (docs/design.md): every module imports on its own, the
import graph has no cycle, only the command (``cli.py``, ``__main__.py``)
prints or exits, and no function is longer than ``MAX_FUNCTION_LINES``.

The checks read the source with ``ast``: every import counts, at module level
or deferred inside a function (a deferred import that closes a cycle is still
a cycle of the design), except those under ``if TYPE_CHECKING:``.  Each check
has a companion showing it finds what it looks for.
"""

from __future__ import annotations

import ast
import importlib
import pathlib
import re

import pytest

import singe

PACKAGE = pathlib.Path(singe.__file__).parent
COMMAND = {"singe.cli", "singe.__main__"}
MAX_FUNCTION_LINES = 80


def module_name(path: pathlib.Path, root: pathlib.Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_sources(root: pathlib.Path = PACKAGE) -> dict[str, str]:
    """Module name -> source text of every module under ``root``."""
    return {module_name(path, root): path.read_text() for path in sorted(root.rglob("*.py"))}


def _type_checking_only(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and ast.unparse(test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Import nodes of ``tree``, skipping ``if TYPE_CHECKING:`` blocks."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        for child in ast.iter_child_nodes(node):
            if not _type_checking_only(child):
                stack.append(child)


def import_graph(sources: dict[str, str], top: str = "singe") -> dict[str, set[str]]:
    """Module -> the modules of the package it imports.  ``from pkg import name``
    points at the submodule ``pkg.name`` when there is one, else at ``pkg``
    (a package's own ``__init__`` imported on the way to a submodule is not an edge)."""
    graph: dict[str, set[str]] = {name: set() for name in sources}
    for name, text in sources.items():
        is_package = name == top or any(other.startswith(name + ".") for other in sources)
        base_package = name if is_package else name.rpartition(".")[0]
        for node in _imports(ast.parse(text)):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = base_package.split(".")[:len(base_package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in sources else base
                           for alias in node.names]
            for target in targets:
                while target and target not in sources:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
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
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def prints_or_exits(text: str) -> list[int]:
    """Lines of ``text`` that print or end the process."""
    lines = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call):
            called = ast.unparse(node.func)
            if called in ("print", "exit", "quit", "sys.exit", "os._exit", "os.abort"):
                lines.append(node.lineno)
        elif isinstance(node, ast.Raise) and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if ast.unparse(raised) in ("SystemExit", "KeyboardInterrupt"):
                lines.append(node.lineno)
    return sorted(lines)


def long_functions(text: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int, int]]:
    """(name, first line, length) of the functions of ``text`` longer than ``limit`` lines."""
    return [(node.name, node.lineno, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(text))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > limit]


# -- the package -----------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(set(package_sources()) - {"singe.__main__"}))
def test_every_module_imports(name):
    importlib.import_module(name)


def test_the_import_graph_has_no_cycle():
    graph = import_graph(package_sources())
    assert graph["singe.kernels.chemistry"] >= {"singe.derived.rates", "singe.derived.qssa"}  # the graph is read
    assert cycles(graph) == []


def test_kernels_read_derived_tables_not_reference_internals():
    graph = import_graph(package_sources())
    for name, targets in graph.items():
        if name.startswith("singe.kernels.") and name != "singe.kernels.registry":
            assert not {t for t in targets if t.startswith("singe.reference")}, name
        if name.startswith("singe.derived"):
            assert not {t for t in targets if t.startswith(("singe.reference", "singe.kernels"))}, name


def test_only_the_command_prints_or_exits():
    offenders = {name: lines for name, text in package_sources().items()
                 if name not in COMMAND and (lines := prints_or_exits(text))}
    assert offenders == {}


def test_no_function_is_longer_than_the_limit():
    offenders = {name: found for name, text in package_sources().items() if (found := long_functions(text))}
    assert offenders == {}


def test_the_version_has_one_definition():
    """pyproject.toml reads the version from singe/version.py (hatch's dynamic version)."""
    tomllib = pytest.importorskip("tomllib", reason="tomllib needs Python 3.11")
    project = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    source = PACKAGE.parent / project["tool"]["hatch"]["version"]["path"]
    assert re.search(r'^__version__ = "([^"]+)"$', source.read_text(), re.M).group(1) == singe.__version__
    written = [name for name, text in package_sources().items() if re.search(r"\b\d+\.\d+\.\d+\b", text)
               and "__version__ =" in text]
    assert written == ["singe.version"]


# -- companions: each check finds what it looks for ---------------------------------------

def _write(root: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "pkg"


def test_a_deferred_import_cycle_is_found(tmp_path):
    root = _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg.b import g\n",
        "pkg/b.py": "def g():\n    from pkg import a\n",
        "pkg/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import x\n",
        "pkg/d.py": "import pkg.c\n"})
    graph = import_graph(package_sources(root), top="pkg")
    assert cycles(graph) == [["pkg.a", "pkg.b"]]
    assert graph["pkg.c"] == set() and graph["pkg.d"] == {"pkg.c"}


def test_a_package_importing_its_submodule_lazily_is_no_cycle_unless_it_is_read_back(tmp_path):
    root = _write(tmp_path, {
        "pkg/__init__.py": "X = 1\ndef f():\n    from pkg.sub import y\n",
        "pkg/sub.py": "from pkg import other\n",
        "pkg/other.py": ""})
    assert cycles(import_graph(package_sources(root), top="pkg")) == []
    (root / "sub.py").write_text("from pkg import X\n")
    assert cycles(import_graph(package_sources(root), top="pkg")) == [["pkg", "pkg.sub"]]


def test_prints_and_exits_are_found():
    text = 'def f():\n    """print(docs) are fine"""\n    print("x")\n\nsys.exit(1)\nraise SystemExit(2)\n'
    assert prints_or_exits(text) == [3, 5, 6]
    assert prints_or_exits("logger.info('x')\n") == []


def test_long_functions_are_found():
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    assert long_functions(f"def long():\n{body}") == [("long", 1, MAX_FUNCTION_LINES + 1)]
    assert long_functions(f"def fits():\n{body[:-len('    x79 = 79')-1]}") == []
