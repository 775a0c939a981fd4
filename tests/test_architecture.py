"""The package's structure: no import circle between modules or between packages (every import counts, lazy
ones and TYPE_CHECKING ones included), no module importing another module's private (_underscore) name,
no source file over 400 lines, no function over 60 lines where the sweep is driven (``driver.py``, ``pipelines/``,
``executors/``, ``export/``), no function over six parameters (a command's flag mirror aside). See
docs/architecture.md."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ragsweep"
MAX_LINES = 400
MAX_FUNCTION_LINES = 60
DRIVER = ("driver.py", "pipelines", "executors", "export")  # issue 29: the driver reads as short steps
MAX_PARAMETERS = 6  # issue 43: beyond it, a bundle (``TestOptions``, the run state) travels instead
# entry points that mirror a command's flags, one parameter per flag
FLAG_MIRRORS = {"api.py:sweep", "cli.py:run", "generate/cli_command.py:generate", "judges_cli.py:evaluate"}
FLAG_MIRRORS |= {"serve_cli.py:serve"}
# what still takes more: none since issue 43 (48 when the rule was written); the list may only shrink
OVER_PARAMETERS: set[str] = set()


def _modules() -> dict[str, Path]:
    out = {}
    for f in SRC.rglob("*.py"):
        parts = list(f.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The package module an imported name lives in (None for the root package's own facade)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name if name and name != "ragsweep" else None


def _imports(module: str, path: Path) -> list[tuple[str, str]]:
    """(target module, imported name) for every ragsweep import anywhere in the file."""
    out = []
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(t, "") for a in node.names if a.name.split(".")[0] == "ragsweep" and (t := _resolve(a.name))]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_pkg else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                src = ".".join(base + ([node.module] if node.module else []))
            else:
                src = node.module or ""
            if src.split(".")[0] != "ragsweep":
                continue
            for a in node.names:
                full = f"{src}.{a.name}"
                target = _resolve(full) if full in MODULES else _resolve(src)
                if target:
                    out.append((target, a.name))
    return out


EDGES = {m: _imports(m, p) for m, p in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan 1972)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_the_walker_sees_lazy_imports():
    """A lazy (function-level) import is an edge: the sweep imports the executors only inside run_sweep."""
    assert "ragsweep.executors" in {t for t, _ in EDGES["ragsweep.driver"]}


def test_no_import_circle_between_modules():
    graph = {m: {t for t, _ in edges if t != m} for m, edges in EDGES.items()}
    assert _cycles(graph) == []


def test_no_import_circle_between_packages():
    graph: dict[str, set[str]] = {}
    for m, edges in EDGES.items():
        for t, _ in edges:
            if _package(t) != _package(m):
                graph.setdefault(_package(m), set()).add(_package(t))
    assert _cycles(graph) == []


def test_no_module_imports_another_modules_private_names():
    bad = [
        f"{m} imports {name} from {t}"
        for m, edges in EDGES.items()
        for t, name in edges
        if t != m and name.startswith("_") and not name.startswith("__")
    ]
    assert bad == []


def test_no_source_file_over_400_lines():
    long = {
        str(p.relative_to(SRC)): n
        for p in SRC.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def long_functions(path: Path, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """``name (n lines)`` of each function or method in ``path`` longer than ``limit`` lines, docstring included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > limit
    ]


def test_no_function_over_60_lines_in_the_driver():
    files = [
        f for part in DRIVER for f in ([SRC / part] if part.endswith(".py") else sorted((SRC / part).rglob("*.py")))
    ]
    assert len(files) > 40
    long = {str(f.relative_to(SRC)): found for f in files if (found := long_functions(f))}
    assert long == {}


def many_parameters(path: Path, limit: int = MAX_PARAMETERS) -> list[str]:
    """The functions and methods in ``path`` that take more than ``limit`` parameters (``self``, ``cls`` aside)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs if x.arg not in ("self", "cls")]
            if len(names) > limit:
                out.append(node.name)
    return out


def test_no_function_takes_more_than_six_parameters_but_those_listed():
    """The parameter rule as a ratchet: no new function over six parameters (a command's flag mirror aside), and
    a function mended leaves ``OVER_PARAMETERS``, so the list only shrinks."""
    found = {f"{p.relative_to(SRC).as_posix()}:{name}" for p in SRC.rglob("*.py") for name in many_parameters(p)}
    assert sorted(found - FLAG_MIRRORS - OVER_PARAMETERS) == []  # new: pass a bundle instead
    assert sorted(OVER_PARAMETERS - found) == []  # mended: take it off the list


def test_the_checks_can_fail(tmp_path):
    """The circle finder finds circles; the length check finds a long function (a nested one too)."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    body = "".join(f"        x{i} = {i}\n" for i in range(60))
    (tmp_path / "m.py").write_text(
        f"def short():\n    pass\n\n\ndef outer():\n    def inner():\n{body}", encoding="utf-8"
    )
    assert long_functions(tmp_path / "m.py") == ["outer (62 lines)", "inner (61 lines)"]
    (tmp_path / "p.py").write_text("class A:\n    def f(self, a, b, c, d, e, f, g): ...\n", encoding="utf-8")
    assert many_parameters(tmp_path / "p.py") == ["f"] and many_parameters(tmp_path / "p.py", 7) == []
