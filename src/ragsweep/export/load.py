"""``ragsweep.load_pipeline``: an exported folder, or one configuration of a run, as a LlamaIndex query engine.

Both open the configuration with ``pipelines.live.LivePipeline``, the sweep's own stages over a cache (the
folder's ``index/``, or the run's cache), so a question of the run is answered from the same sources, offsets
and scores the run recorded. The folder needs neither the run nor its cache. A folder is checked against its
``SHA256SUMS`` and opened from a private checked copy (``digests.working_copy``): nothing is written into it, and
nothing changed in it is used unless ``allow_modified`` says so.
"""

from __future__ import annotations

import json
from pathlib import Path

from ragsweep.errors import RagsweepError
from ragsweep.export.folder import FORMAT_VERSION, ExportDir
from ragsweep.pipelines.live import Chosen, LivePipeline

Pipeline = LivePipeline  # what load_pipeline returns: engine, retriever, ask, ask_many, close


def load_pipeline(
    path: str | Path,
    config_id: str | None = None,
    *,
    cache: str | Path | None = None,
    allow_modified: bool = False,
    digest: str | None = None,
) -> Pipeline:
    """An exported folder (``ragsweep export``), or ``config_id`` of the run directory ``path`` (default: its
    verdict's pick; ``cache``: where the run's cache is now, if it moved).

    A folder must match its ``SHA256SUMS`` (``allow_modified``: open it as it is, after a warning) and, when
    ``digest`` is given (``sha256:...``, printed by ``ragsweep export``), that list must be the one exported."""
    root = Path(path)
    folder = ExportDir(root)
    if folder.is_export():
        if config_id is not None:
            raise RagsweepError(f"{root}: an exported folder holds one configuration; leave config_id out")
        return _from_folder(folder, allow_modified, digest)
    if (root / "manifest.json").is_file():
        if digest is not None or allow_modified:
            raise RagsweepError(
                f"{root}: a run directory, not an exported folder; digests and allow_modified check exported "
                "folders (ragsweep export) only; leave them out"
            )
        return _from_run(root, config_id, Path(cache) if cache is not None else None)
    raise RagsweepError(
        f"{root}: neither an exported pipeline (no pipeline.json) nor a run directory (no manifest.json); "
        "give the folder `ragsweep export` wrote or a run directory"
    )


def _from_run(run_dir: Path, config_id: str | None, cache: Path | None) -> Pipeline:
    from ragsweep.results.configuration import open_pipeline

    return open_pipeline(run_dir, config_id, cache)


def _from_folder(exported: ExportDir, allow_modified: bool, digest: str | None) -> Pipeline:
    """The pipeline over a checked private copy of the folder, removed when the pipeline closes (or the process
    ends); an error about the copy names the folder's own file."""
    import shutil
    import weakref

    from ragsweep.export.digests import working_copy

    copy = working_copy(exported.root, allow_modified=allow_modified, digest=digest)
    try:
        pipeline = _open(ExportDir(copy), exported.root)
    except RagsweepError as exc:
        shutil.rmtree(copy, ignore_errors=True)
        raise RagsweepError(str(exc).replace(str(copy), str(exported.root))) from None
    except BaseException:
        shutil.rmtree(copy, ignore_errors=True)
        raise
    pipeline.on_close(weakref.finalize(pipeline, shutil.rmtree, copy, ignore_errors=True))
    return pipeline


def _open(folder: ExportDir, shown: Path) -> Pipeline:
    from ragsweep.cache_dir import user_cache
    from ragsweep.config import parse_spec
    from ragsweep.errors import short_reason
    from ragsweep.pipelines.grid import expand

    record = _json(folder.pipeline)
    if record.get("format_version") != FORMAT_VERSION:
        raise RagsweepError(
            f"{folder.pipeline}: format {record.get('format_version')!r}, this ragsweep reads {FORMAT_VERSION}; "
            "export the run again with this version"
        )
    # paths (the corpus, prompt files) are the folder's; the questions are not needed to answer
    spec = parse_spec(record["spec"], str(shown / folder.pipeline.name), base_dir=folder.root, questions_needed=False)
    config = next((c for c in expand(spec) if c.config_id == record["config_id"]), None)
    if config is None:
        raise RagsweepError(f"{folder.pipeline}: its spec no longer makes {record['config_id']!r}; export it again")
    dataset = _corpus(folder, spec)
    chosen = Chosen(record.get("tuned_weights"), record.get("abstain_threshold"))
    models = user_cache()  # the ONNX export outlives the private copy: written once per user, not per load
    try:
        return Pipeline(spec, config, dataset, folder.cache, chosen=chosen, export_root=models)
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:  # an index file that cannot be read
        raise RagsweepError(
            f"{folder.cache.root}: cannot be opened ({short_reason(exc)}); export the run again"
        ) from None


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RagsweepError(f"{path}: missing; export the run again") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RagsweepError(f"{path}: not valid JSON ({exc}); export the run again") from None
    if not isinstance(data, dict) or "spec" not in data or "config_id" not in data:
        raise RagsweepError(f"{path}: not an exported pipeline's record (no spec or config_id); export the run again")
    return data


def _corpus(folder: ExportDir, spec):
    from ragsweep.datasets.load import dataset_name
    from ragsweep.datasets.types import Dataset, Document

    documents, n = [], 0
    if not folder.corpus.is_file():
        raise RagsweepError(f"{folder.corpus}: missing; export the run again")
    with folder.corpus.open(encoding="utf-8", errors="strict") as f:
        try:
            for n, line in enumerate(f, 1):
                if line.strip():
                    row = json.loads(line)
                    meta = {k: v for k, v in row.items() if k not in ("id", "text")}
                    documents.append(Document(str(row["id"]), row["text"], meta))
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise RagsweepError(
                f"{folder.corpus}:{n}: not a document line ({type(exc).__name__}); export the run again"
            ) from None
    return Dataset(name=dataset_name(spec.dataset), documents=documents, questions=[])
