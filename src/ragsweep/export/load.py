"""``ragsweep.load_pipeline``: an exported folder, or one configuration of a run, as a LlamaIndex query engine.

Both open the configuration with ``pipelines.live.LivePipeline``, the sweep's own stages over a cache (the
folder's ``index/``, or the run's cache), so a question of the run is answered from the same sources, offsets
and scores the run recorded. The folder needs neither the run nor its cache.
"""

from __future__ import annotations

import json
from pathlib import Path

from ragsweep.errors import RagsweepError
from ragsweep.export.folder import FORMAT_VERSION, ExportDir
from ragsweep.pipelines.live import LivePipeline

Pipeline = LivePipeline  # what load_pipeline returns: engine, retriever, ask, ask_many, close


def load_pipeline(path: str | Path, config_id: str | None = None, *, cache: str | Path | None = None) -> Pipeline:
    """An exported folder (``ragsweep export``), or ``config_id`` of the run directory ``path`` (default: its
    verdict's pick; ``cache``: where the run's cache is now, if it moved)."""
    root = Path(path)
    folder = ExportDir(root)
    if folder.is_export():
        if config_id is not None:
            raise RagsweepError(f"{root}: an exported folder holds one configuration; leave config_id out")
        return _from_folder(folder)
    if (root / "manifest.json").is_file():
        return _from_run(root, config_id, Path(cache) if cache is not None else None)
    raise RagsweepError(
        f"{root}: neither an exported pipeline (no pipeline.json) nor a run directory (no manifest.json); "
        "give the folder `ragsweep export` wrote or a run directory"
    )


def _from_run(run_dir: Path, config_id: str | None, cache: Path | None) -> Pipeline:
    from ragsweep.results.configuration import open_pipeline

    return open_pipeline(run_dir, config_id, cache)


def _from_folder(folder: ExportDir) -> Pipeline:
    from ragsweep.config import parse_spec
    from ragsweep.pipelines.grid import expand

    record = json.loads(folder.pipeline.read_text(encoding="utf-8"))
    if record.get("format_version") != FORMAT_VERSION:
        raise RagsweepError(
            f"{folder.pipeline}: format {record.get('format_version')!r}, this ragsweep reads {FORMAT_VERSION}; "
            "export the run again with this version"
        )
    # paths (the corpus, prompt files) are the folder's; the questions are not needed to answer
    spec = parse_spec(record["spec"], str(folder.pipeline), base_dir=folder.root, questions_needed=False)
    config = next((c for c in expand(spec) if c.config_id == record["config_id"]), None)
    if config is None:
        raise RagsweepError(f"{folder.pipeline}: its spec no longer makes {record['config_id']!r}; export it again")
    dataset = _corpus(folder, spec)
    tuned, threshold = record.get("tuned_weights"), record.get("abstain_threshold")
    return Pipeline(spec, config, dataset, folder.cache, tuned=tuned, threshold=threshold)


def _corpus(folder: ExportDir, spec):
    from ragsweep.datasets.load import dataset_name
    from ragsweep.datasets.types import Dataset, Document

    documents = []
    with folder.corpus.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                meta = {k: v for k, v in row.items() if k not in ("id", "text")}
                documents.append(Document(str(row["id"]), row["text"], meta))
    return Dataset(name=dataset_name(spec.dataset), documents=documents, questions=[])
