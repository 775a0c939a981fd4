"""One configuration of a finished run, with what rebuilding it needs: the run's spec, the configuration, its
dataset, the cache it was computed in and what it chose on the validation questions (tuned fusion weights, a
tuned abstention threshold). ``ask``, ``export`` and ``load_pipeline`` open a run's configuration this way."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsweep.errors import RagsweepError
from ragsweep.results.manifest_file import read_manifest
from ragsweep.run_dir import RunDir
from ragsweep.run_records import Manifest


@dataclass
class RunConfiguration:
    run_dir: Path
    manifest: Manifest
    spec: Any  # SweepSpec
    config: Any  # pipelines.grid.Configuration
    cache: Path | None
    tuned: dict | None
    threshold: dict | None

    @property
    def chosen(self):
        """What the run chose on its validation questions (``pipelines.live.Chosen``)."""
        from ragsweep.pipelines.live import Chosen

        return Chosen(self.tuned, self.threshold)

    def dataset(self):
        """The run's dataset, loaded again from the spec's files (the corpus must be what the run read)."""
        from ragsweep.datasets.load import load_dataset

        dataset = load_dataset(self.spec.dataset)
        ran_on = (self.manifest.get("dataset") or {}).get("corpus_fingerprint")
        if ran_on is not None and dataset.corpus_fingerprint() != ran_on:
            raise RagsweepError(
                f"{self.run_dir}: the corpus the spec names changed since the run (fingerprint "
                f"{dataset.corpus_fingerprint()}, the run's {ran_on}); restore it, or run the sweep again"
            )
        return dataset


def open_configuration(run_dir: Path, config_id: str | None = None, cache: Path | None = None) -> RunConfiguration:
    """``config_id`` of the run in ``run_dir`` (default: the verdict's pick); ``cache``: where the run's cache is
    now (default: where the manifest says it was)."""
    from ragsweep.config import parse_spec
    from ragsweep.pipelines.grid import expand

    manifest = read_manifest(run_dir)
    spec = parse_spec(manifest["spec"], f"{run_dir}/manifest.json")
    configs = {c.config_id: c for c in expand(spec)}
    config_id = config_id or verdict_pick(run_dir)
    if config_id not in configs:
        close = sorted(configs)[:8]
        raise RagsweepError(f"{config_id!r} is not a configuration of {run_dir}; e.g. {', '.join(close)}")
    cache = cache or (Path(cached) if (cached := manifest.get("cache_dir")) else None)
    tuned = (manifest.get("tuned_weights") or {}).get(config_id)  # weights the run chose on validation
    threshold = (manifest.get("abstain_thresholds") or {}).get(config_id)  # and its abstention threshold
    return RunConfiguration(run_dir, manifest, spec, configs[config_id], cache, tuned, threshold)


def verdict_pick(run_dir: Path) -> str:
    """The configuration the run's verdict chose, or a one-line error saying to name one."""
    path = RunDir(run_dir).verdict
    chosen = json.loads(path.read_text(encoding="utf-8")).get("chosen") if path.is_file() else None
    if not chosen:
        raise RagsweepError(
            f"{run_dir}: its verdict chose no configuration (verdict.json missing or without a pick); "
            "name one (a config_id of `ragsweep show RUN`)"
        )
    return str(chosen)


def open_pipeline(run_dir: Path, config_id: str | None = None, cache: Path | None = None):
    """``config_id`` of the run (default: the verdict's pick) as a ``pipelines.live.LivePipeline`` over the run's
    cache, with the weights and threshold the run chose."""
    from ragsweep.cache_dir import DEFAULT_CACHE, CacheDir
    from ragsweep.pipelines.live import LivePipeline

    run = open_configuration(run_dir, config_id, cache)
    store = CacheDir(Path(run.cache or run.spec.cache_dir or DEFAULT_CACHE))
    return LivePipeline(run.spec, run.config, run.dataset(), store, chosen=run.chosen)
