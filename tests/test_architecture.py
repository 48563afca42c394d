"""The layers of ARCHITECTURE.md, read from the code: no module imports a layer above its own, and no import
cycle — imports inside functions and under ``TYPE_CHECKING`` count as much as those at the top of a module."""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "yuesheng"

# Bottom to top; a module's layer is the longest prefix of its dotted name listed here.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("yuesheng.text", "yuesheng.lazy"),
    ("yuesheng.errors",),
    ("yuesheng.limits", "yuesheng.files", "yuesheng.process", "yuesheng.yamlload", "yuesheng.checking",
     "yuesheng.characters", "yuesheng.sources", "yuesheng.datafiles", "yuesheng.caches", "yuesheng.datacodec",
     "yuesheng.fonts"),
    ("yuesheng.music",),
    ("yuesheng.cuesheet",),
    ("yuesheng.staging",),
    ("yuesheng.timeline",),
    ("yuesheng.check",),
    ("yuesheng.production",),
    ("yuesheng.outputs",),
    ("yuesheng.live",),
    ("yuesheng.web",),
    ("yuesheng.cli", "yuesheng.__main__", "yuesheng"),
)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> int:
    best, found = -1, -1
    for n, names in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best:
                best, found = len(name), n
    assert found >= 0, f"{module} is in no layer: add it to LAYERS and ARCHITECTURE.md"
    return found


def imports(module: str) -> set[str]:
    """The yuesheng modules *module* imports, anywhere in its body."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            for alias in node.names:  # ``from yuesheng.x import y`` imports module yuesheng.x.y when there is one
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    return {m for m in found if m in MODULES and m != module}


GRAPH = {m: imports(m) for m in MODULES}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_a_layer_above_its_own(module: str) -> None:
    upward = sorted(m for m in GRAPH[module] if layer(m) > layer(module))
    assert not upward, f"{module} (layer {layer(module)}) imports {upward} from a layer above"


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as a path that ends where it began, or []."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = 2
        stack.pop()
        return []

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return []


def test_no_import_cycle_type_checking_included() -> None:
    cycle = find_cycle(GRAPH)
    assert not cycle, "import cycle: " + " → ".join(cycle)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if MODULES[m].name != "__init__.py"))
def test_a_module_imports_its_siblings_not_its_own_package(module: str) -> None:
    """A package's __init__ re-exports its modules (and may import the module itself): a module importing its own
    package would depend on all of them, reader included, and be one edit away from a cycle."""
    package = module.rpartition(".")[0]
    assert package == "yuesheng" or package not in GRAPH[module], f"{module} imports its own package {package}"


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_lazy_and_type_checking_imports() -> None:
    """The reader counts an import inside a function and one under TYPE_CHECKING (so neither can hide a cycle)."""
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from yuesheng.cli import main\n"
                     "def f():\n    import yuesheng.web.sheet\n")
    names = {n.module if isinstance(n, ast.ImportFrom) else n.names[0].name
             for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)}
    assert {"yuesheng.cli", "yuesheng.web.sheet"} <= names
    assert "yuesheng.music.lulu" in GRAPH["yuesheng.music.score"]


def test_every_module_is_in_a_layer() -> None:
    for module in MODULES:
        layer(module)


def test_events_are_built_by_keyword() -> None:
    """``Event`` is a NamedTuple (for speed), so Python would take its 20 fields by position too: every ``Event(...)``
    of the package names them, as the frozen dataclass it was required."""
    positional = [f"{module}:{node.lineno}" for module, path in MODULES.items()
                  for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                  if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Event"
                  and node.args]
    assert not positional
    assert sum(1 for path in MODULES.values() if "Event(start_tick=" in path.read_text(encoding="utf-8")) >= 4


@pytest.mark.parametrize("package", ["yuesheng.cuesheet", "yuesheng.timeline"])
def test_a_lazy_package_exports_what_it_imports_for_the_type_checker(package: str) -> None:
    """A package of ``yuesheng.lazy`` names each export twice, under ``TYPE_CHECKING`` for mypy and in ``exports``
    for Python: both, and ``__all__``, must agree, or mypy passes a name that fails when it is used."""
    import importlib

    tree = ast.parse(MODULES[package].read_text(encoding="utf-8"))
    guarded = [n for n in ast.walk(tree) if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"]
    typed = {alias.asname or alias.name: statement.module or "" for block in guarded for statement in block.body
             if isinstance(statement, ast.ImportFrom) for alias in statement.names}
    module = importlib.import_module(package)
    assert set(typed) == set(module.__all__)
    for name, home in typed.items():
        assert getattr(module, name) is getattr(importlib.import_module(home), name), name


ARCHITECTURE = PACKAGE.parent / "ARCHITECTURE.md"
# A name in backticks is a module of the row's package: a function has its parentheses, a file its suffix or folder.
BARE_NAME = re.compile(r"`([a-z][a-z0-9_]*)`")


def table_rows(text: str) -> list[tuple[str, set[str]]]:
    """ARCHITECTURE.md's layer table, bottom up: each row's layer and the modules it names — the files and packages
    of its *where* column, and, in a package's row, each bare name of its *what* column."""
    lines = text.split("| layer | where | what it holds |\n", 1)[1].splitlines()
    rows = []
    for line in lines[1:]:  # after the |---| line
        if not line.startswith("|"):
            break
        name, where, what = (cell.strip() for cell in line.strip("|").split("|"))
        files = re.findall(r"`([^`]+)`", where)
        modules = {module_name(PACKAGE / f) for f in files if f.endswith(".py")}
        packages = [f"yuesheng.{f.rstrip('/')}" for f in files if f.endswith("/")]
        modules.update(packages)
        if len(packages) == 1:
            modules.update(f"{packages[0]}.{bare}" for bare in BARE_NAME.findall(what))
        rows.append((name, modules))
    return rows


ROWS = table_rows(ARCHITECTURE.read_text(encoding="utf-8"))


def test_every_module_the_table_names_exists() -> None:
    assert [(row, sorted(set(named) - set(MODULES))) for row, named in ROWS if set(named) - set(MODULES)] == []


def test_every_module_is_named_in_the_table_once() -> None:
    named = [m for _, modules in ROWS for m in modules]
    assert sorted(set(MODULES) - set(named)) == []
    assert sorted(m for m in set(named) if named.count(m) > 1) == []


def test_the_table_rows_are_the_layers_bottom_up() -> None:
    """Each row holds modules of its own layers only, and every row is above the row before."""
    spans = [(row, min(map(layer, modules)), max(map(layer, modules))) for row, modules in ROWS]
    for (below, _, top), (row, bottom, _) in itertools.pairwise(spans):
        assert top < bottom, f"the table's row {row} holds a module of a layer not above row {below}'s"


def test_the_table_reader_reads_a_row() -> None:
    text = ("| layer | where | what it holds |\n|---|---|---|\n| base | `text.py` `lazy.py` | helpers |\n"
            "| music | `music/` | `lulu` (律呂), `score` from `data/x.json` by `load_piece()` |\n\nafter\n")
    assert table_rows(text) == [("base", {"yuesheng.text", "yuesheng.lazy"}),
                                ("music", {"yuesheng.music", "yuesheng.music.lulu", "yuesheng.music.score"})]


# An HTML or SVG tag in a string (not a regular expression's named group, ``(?P<title>…)``).
HTML_TAG = re.compile(r"(?<!\?P)</?(?:html|head|body|style|script|div|span|table|tr|td|li|ul|svg|g|rect|circle|line|"
                      r"polyline|path|text|title)[\s/>]")
MARKUP_WRITERS = {"yuesheng.web.sheet", "yuesheng.outputs.plan"}  # as ARCHITECTURE.md's web row says


def test_html_is_written_in_python_only_where_the_architecture_says() -> None:
    """The pages are templates (web/templates/); the only markup made in Python is the documented, repeated kind."""
    writers = {module for module, path in MODULES.items() if any(map(HTML_TAG.search, strings(path)))}
    assert writers == MARKUP_WRITERS


def strings(path: Path) -> list[str]:
    """The string constants of a module, its docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs]
