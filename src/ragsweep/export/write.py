"""``ragsweep export RUN [CONFIG_ID] --out DIR``: one configuration of a run, as a folder that loads anywhere.

The folder holds what retrieval reads, copied from the run's cache rather than computed again: the
configuration's chunks (offsets included), its chunk vectors, its Chroma collection (searched exactly over its
vectors, as the run searched it; its HNSW graph as the run built it), its knowledge graph; the corpus (windows,
parents and pages are cut from it); the run's spec with its prompt files copied in; the weights and threshold the
run chose on its validation questions; last, ``SHA256SUMS`` (``digests``): the digest of every file, which
``load_pipeline(DIR)`` checks before it rebuilds the same query engine from the folder.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

from ragsweep.errors import RagsweepError
from ragsweep.export.digests import write_sums
from ragsweep.export.folder import FORMAT_VERSION, ExportDir


def export_pipeline(run_dir: Path, config_id: str | None, out: Path, cache: Path | None = None) -> ExportDir:
    """Write ``config_id`` of the run in ``run_dir`` (default: the verdict's pick) to the folder ``out``."""
    from ragsweep.cache_dir import DEFAULT_CACHE, CacheDir
    from ragsweep.results.configuration import open_configuration

    run = open_configuration(run_dir, config_id, cache)
    refuse_unexportable(run.config, run.spec)
    dest = ExportDir(out)
    _prepare(out)
    source = CacheDir(Path(run.cache or run.spec.cache_dir or DEFAULT_CACHE))
    dataset = run.dataset()
    spec = portable_spec(run.spec, dest)
    _write_corpus(dataset, dest.corpus)
    copy_index(run.spec, run.config, dataset, source, dest.cache)
    _write_json(dest.pipeline, _pipeline_record(run, spec))
    entry = next(c for c in run.manifest.get("configurations", []) if c.get("config_id") == run.config.config_id)
    _write_json(dest.configuration, entry)
    dest.readme.write_text(_readme(run.config.config_id, run.run_dir, run.config), encoding="utf-8")
    write_sums(dest.root)  # last: it digests every file written above
    return dest


def refuse_unexportable(config, spec) -> None:
    """A one-line error for what an exported folder cannot hold yet."""
    cid = config.config_id
    if config.baseline is not None:
        raise RagsweepError(
            f"{cid}: a reference baseline answers from the gold evidence of the run's questions, not from an index; "
            "export one of the configurations it is compared with"
        )
    if config.adaptive is not None:
        raise RagsweepError(
            f"{cid}: an adaptive configuration routes by a classifier trained on the run's validation questions, "
            "which an export does not carry yet; export one of the fixed configurations it routes between"
        )
    if config.retriever.uses_graph and getattr(config.retriever, "store", "simple") == "neo4j":
        raise RagsweepError(
            f"{cid}: its knowledge graph lives in Neo4j, not in the run's cache; sweep it with store: simple "
            "(the same graph, kept in a file) to export it"
        )
    if spec.vector_store.url and config.embedding is not None:
        raise RagsweepError(
            f"{cid}: its vectors are in the Chroma server at {spec.vector_store.url}, not in the run's cache; "
            "sweep it with the embedded store (vector_store: {}) to export it"
        )


def _prepare(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise RagsweepError(f"--out {out}: exists and is not an empty folder; name a new folder")
    out.mkdir(parents=True, exist_ok=True)


def portable_spec(spec, dest: ExportDir):
    """The run's spec with its prompt files copied into the folder and named relative to it, and no cache or
    vector store path of the machine it ran on."""
    from ragsweep.config import VectorStoreSpec, uses_llm
    from ragsweep.config.dataset import JsonlCorpus
    from ragsweep.datasets.load import dataset_name

    copied: dict[Path, str] = {}

    def keep(path: Path | None) -> Path | None:
        if path is None:
            return None
        if path not in copied:
            dest.prompts.mkdir(exist_ok=True)
            name = f"{len(copied)}-{Path(path).name}"
            shutil.copyfile(path, dest.prompts / name)
            copied[path] = f"prompts/{name}"
        return Path(copied[path])

    gen = spec.generator
    if getattr(gen, "prompt_file", None) is not None or getattr(gen, "prompt_files", None):
        gen = gen.model_copy(
            update={
                "prompt_file": keep(gen.prompt_file),
                "prompt_files": [keep(p) for p in gen.prompt_files] if gen.prompt_files else None,
            }
        )
    splitters = []
    for sp in spec.splitters:
        if uses_llm(sp.context) and sp.context.prompt_file is not None:
            context = sp.context.model_copy(update={"prompt_file": keep(sp.context.prompt_file)})
            sp = sp.model_copy(update={"context": context})
        splitters.append(sp)
    dataset = spec.dataset.model_copy(
        update={
            "name": dataset_name(spec.dataset),
            "corpus": JsonlCorpus(format="jsonl", path=dest.corpus.name),
            "negatives": None,
        }
    )
    update = {
        "dataset": dataset,  # its questions section says where the run's came from; the folder needs none
        "generator": gen,
        "splitters": splitters,
        "adaptive": [],
        "stage2": None,
        "cache_dir": None,
        "vector_store": VectorStoreSpec(),
        # where the sweep sent its traces is not where a served copy should send questions and documents: a
        # loaded pipeline traces only where its operator says (OTEL_EXPORTER_OTLP_*), into the sweep's project,
        # in its own session (live), not the sweep's
        "tracing": spec.tracing.model_copy(update={"otlp": None, "session": None}),
    }
    return spec.model_copy(update=update)


def _write_corpus(dataset, path: Path) -> None:
    """One JSON object per document: ``id``, ``text`` and its metadata's keys (a ``format: jsonl`` corpus)."""
    with path.open("w", encoding="utf-8") as f:
        for d in dataset.documents:
            meta = {k: v for k, v in d.metadata.items() if k not in ("id", "text")}
            f.write(json.dumps({"id": d.doc_id, "text": d.text, **meta}, ensure_ascii=False) + "\n")


def copy_index(spec, config, dataset, source, dest) -> None:
    """This configuration's chunks, chunk vectors, Chroma collection and knowledge graph, from the run's cache
    (``source``) into the folder's (``dest``)."""
    from ragsweep.export.index_copy import copy_graphs, copy_vectors
    from ragsweep.pipelines.context import Models, StageContext
    from ragsweep.pipelines.stages.chunk import cached_chunks, cached_chunks_path

    chunks_file = cached_chunks_path(source, config, dataset)
    if not chunks_file.is_file():
        raise RagsweepError(
            f"{source.root}: holds no chunks of {config.config_id} (a cleaned or different cache); pass the run's "
            "cache with --cache, or run the sweep again"
        )
    target = cached_chunks_path(dest, config, dataset)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(chunks_file, target)
    ctx = StageContext(spec=spec, dataset=dataset, cache=dest, models=Models(lambda: None))
    chunks = cached_chunks(ctx, config)
    assert chunks is not None  # copied just above
    if config.embedding is not None:
        copy_vectors(ctx, config, chunks, source)
    if config.retriever.uses_graph:
        copy_graphs(ctx, config, chunks, source)


def _pipeline_record(run, spec) -> dict:
    from ragsweep import __version__
    from ragsweep.redact import redact

    return {
        "format_version": FORMAT_VERSION,
        "ragsweep_version": __version__,
        "exported_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "run": {"dir": str(run.run_dir), "name": run.spec.name},
        "config_id": run.config.config_id,
        "config_hash": run.config.config_hash,
        # no URL's credentials (they come from the environment where it is loaded): ragsweep.redact
        "spec": redact(json.loads(spec.model_dump_json())),
        "tuned_weights": run.tuned,
        "abstain_threshold": run.threshold,
    }


def _write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _readme(config_id: str, run_dir: Path, config) -> str:
    from ragsweep.export.model_note import model_note

    return "\n".join(
        [
            f"# {config_id}",
            "",
            f"One configuration of the ragsweep run `{run_dir}`, exported by `ragsweep export`.",
            "",
            "```python",
            "import ragsweep",
            "",
            'pipeline = ragsweep.load_pipeline("THIS_FOLDER")',
            'print(pipeline.engine.query("your question"))  # a LlamaIndex RetrieverQueryEngine',
            'record = pipeline.ask("your question")  # answer, sources (document, offsets, page, score)',
            "```",
            "",
            model_note(config),
            "",
            "`pipeline.json`: where it came from and the weights and threshold the run chose on its validation "
            "questions; `configuration.json`: its settings; `corpus.jsonl`: the documents; `index/`: its chunks, "
            "vectors, Chroma collection and knowledge graph; `prompts/`: the prompt files its spec names; "
            "`SHA256SUMS`: the sha256 of each of those files, checked whenever the folder is loaded or served "
            "(`sha256sum -c SHA256SUMS` checks it too). Loading copies the checked files to a private temporary "
            "folder and reads only that copy, so this folder may be read-only.",
            "",
        ]
    )
