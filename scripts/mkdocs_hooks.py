"""mkdocs hooks: the pages written at build time, so that the site cannot drift from the code and the repository.

``reference/spec.md`` is ``ragsweep.spec_reference`` (the pydantic schema's sections, fields, types, defaults and
descriptions), ``reference/components.md`` ``ragsweep.component_reference`` (every kind of each component family);
``benchmarks.md`` and ``changelog.md`` are the repository's BENCHMARKS.md and CHANGELOG.md, with
the figures BENCHMARKS.md shows.
"""

from __future__ import annotations

from pathlib import Path


def on_files(files, config):
    from mkdocs.structure.files import File

    from ragsweep.component_reference import component_reference
    from ragsweep.spec_reference import spec_reference

    root = Path(config["config_file_path"]).parent
    files.append(File.generated(config, "reference/spec.md", content=spec_reference()))
    files.append(File.generated(config, "reference/components.md", content=component_reference()))
    files.append(File.generated(config, "benchmarks.md", content=(root / "BENCHMARKS.md").read_text(encoding="utf-8")))
    files.append(File.generated(config, "changelog.md", content=(root / "CHANGELOG.md").read_text(encoding="utf-8")))
    for figure in sorted((root / "bench" / "figures").glob("*.png")):
        files.append(File.generated(config, f"bench/figures/{figure.name}", abs_src_path=str(figure)))
    return files
