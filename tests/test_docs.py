"""The documentation: a short README whose links resolve, a site that builds strictly, a spec reference that
names every section and field of the schema."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from ragsweep.config import SweepSpec
from ragsweep.spec_reference import models, spec_reference, type_name

ROOT = Path(__file__).resolve().parents[1]


def test_readme_is_the_short_entry_and_its_links_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    assert "make test" in text  # CI runs the README's test command
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        if not target.startswith("http"):
            assert (ROOT / target).is_file(), target


def test_spec_reference_names_every_section_and_field():
    text = spec_reference()
    found = models(SweepSpec)
    assert len(found) > 40
    for model in found:
        assert f"\n## {model.__name__}\n" in text, model.__name__
        section = text.split(f"\n## {model.__name__}\n", 1)[1].split("\n## ", 1)[0]
        for name in model.model_fields:
            assert f"| `{name}` |" in section, (model.__name__, name)
    assert "| `postprocessors` |" in text and "[MMRSpec](#mmrspec)" in text


def test_component_catalogue_lists_every_kind_with_what_it_is():
    """Each family's kinds come from the schema's unions: a new kind's spec class puts it in the catalogue."""
    from ragsweep.component_reference import FAMILIES, alternatives, component_reference, kind_of

    text = component_reference()
    for family in FAMILIES:
        section = text.split(f"\n## `{family}:`\n", 1)[1].split("\n## ", 1)[0]
        kinds = alternatives(SweepSpec.model_fields[family].annotation)
        assert len(kinds) >= 2, family
        for model in kinds:
            row = next(line for line in section.splitlines() if f"(spec.md#{model.__name__.lower()})" in line)
            assert f"[`{kind_of(model)}`]" in row and row.split(" | ")[1].strip(), (family, model.__name__)
    assert "[`mmr`](spec.md#mmrspec)" in text and "`ragsweep.postprocessors.mmr`" in text
    assert "[`hybrid_kg`](spec.md#hybridkgspec)" in text and "from its vector + bm25 + graph results" in text


def test_every_field_says_what_it_means():
    """A field without a description would show an empty cell in the reference (kind, format and name have one
    meaning everywhere, written once)."""
    from ragsweep.spec_reference import field_meaning

    silent = [
        f"{m.__name__}.{name}"
        for m in models(SweepSpec)
        for name, info in m.model_fields.items()
        if not field_meaning(m, name, info)
    ]
    assert not silent, silent


def test_type_names_read_as_a_spec_is_written():
    from typing import Literal, Optional

    assert type_name(Optional[int]) == "int | null"
    assert type_name(list[Literal["a", "b"]]) == 'list["a" | "b"]'


def test_site_builds_strictly(tmp_path):
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(tmp_path / "site")]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "site" / "reference" / "spec" / "index.html").read_text(encoding="utf-8")
    assert "SweepSpec" in page and "chunk_overlap" in page
    assert (tmp_path / "site" / "benchmarks" / "index.html").is_file()
    catalogue = (tmp_path / "site" / "reference" / "components" / "index.html").read_text(encoding="utf-8")
    assert "sentence_window" in catalogue and "late_interaction" in catalogue


_SRC = ROOT / "src" / "ragsweep"
_FILE_KINDS = (".py", ".json", ".jsonl", ".parquet", ".yaml", ".md", ".html", ".sqlite")


def _modules() -> dict[str, Path]:
    """Every module of the package by its dotted path under ``ragsweep`` (a package by its folder's name)."""
    out = {}
    for path in _SRC.rglob("*.py"):
        parts = list(path.relative_to(_SRC).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _defines(path: Path, name: str) -> bool:
    """``name`` is a function, class, attribute or imported name of the module at ``path``."""
    n = re.escape(name)
    pattern = rf"(?m)^\s*((async\s+)?def|class)\s+{n}\b|^\s*(self\.)?{n}\s*[:=]|^\s*self\.{n}\b|import .*\b{n}\b"
    return (
        re.search(pattern, path.read_text(encoding="utf-8")) is not None
        or path.name == "__init__.py"
        and ((path.parent / f"{name}.py").is_file() or (path.parent / name).is_dir())
    )


def _spec_key(parts: list[str]) -> bool:
    """``parts`` is a path of keys in the spec (``scoring.metric``, ``tracking.mlflow``)."""
    return _spec_key_of(SweepSpec, parts)


def _flat(annotation: object) -> list:
    """The types inside ``annotation`` (through unions, Annotated, lists and Optional)."""
    import typing

    args = typing.get_args(annotation)
    return [annotation] if not args else [t for a in args for t in _flat(a)]


def _spec_key_of(model: object, parts: list[str]) -> bool:
    from pydantic import BaseModel

    for part in parts:
        if not (isinstance(model, type) and issubclass(model, BaseModel)) or part not in model.model_fields:
            return False
        annotation = model.model_fields[part].annotation
        args = [a for a in _flat(annotation) if isinstance(a, type) and issubclass(a, BaseModel)]
        if len(args) > 1:  # a union of kinds: the one that has the next key
            return any(_spec_key_of(a, parts[parts.index(part) + 1 :]) for a in args)
        model = args[0] if args else annotation
    return True


def _named_in_source(token: str, modules: dict[str, Path]) -> bool:
    """A file, a folder, a module (``pipelines.plan``), a module's name (``driver._search``), a class's
    (``LivePipeline.twin``) or a spec key that the architecture page names, as it is in the code."""
    if token.endswith(".py") or token.endswith("/"):
        name = token.rstrip("/")
        return any(p.as_posix().endswith(name) for p in ROOT.rglob(f"*{Path(name).name}*") if ".venv" not in p.parts)
    if token.endswith(_FILE_KINDS) or token.startswith("RUN/"):  # what a run writes, not source
        return True
    parts = token.replace("/", ".").split(".")
    parts = parts[1:] if parts[0] == "ragsweep" else parts
    if parts[0] in ("os", "sys", "asyncio"):
        return True
    if parts[0][:1].isupper():  # Class.attribute: a class of that name whose module defines the attribute
        homes = [p for p in modules.values() if re.search(rf"(?m)^class {parts[0]}\b", p.read_text(encoding="utf-8"))]
        return any(_defines(p, parts[1]) for p in homes)
    for i in range(len(parts), 0, -1):
        prefix = ".".join(parts[:i])
        homes = [p for m, p in modules.items() if m == prefix or m.endswith("." + prefix)]
        if homes:
            return i == len(parts) or any(_defines(p, parts[i]) for p in homes) or _spec_key(parts)
    return _spec_key(parts)


def test_every_module_path_the_architecture_page_names_exists():
    """docs/architecture.md is the map: each file, folder, module, function, class and attribute it names in
    backticks is in the code (a renamed ``sweep._search`` or a removed ``registry.REGISTRY`` fails here)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    modules = _modules()
    paths = set(re.findall(r"`([A-Za-z0-9_]+(?:/[A-Za-z0-9_.]+)+/?)`", text))
    dotted = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`", text))
    names = set(re.findall(r"`([A-Za-z0-9_]+\.py)`", text))
    assert len(paths) + len(dotted) > 150
    missing = sorted(
        t for t in paths | dotted | names if not t.startswith("cache/") and not _named_in_source(t, modules)
    )
    assert not missing, f"docs/architecture.md names what the code does not have: {missing}"
