"""An unset backend is the machine's fast path: onnx-int8 without a GPU, torch with one (``config.backend_default``).

The rest of the suite pins the default to torch (conftest); these tests unset the pin and run the CPU default
end to end: what it resolves to and why, the manifest and ``validate``, ids that do not change, and a run
directory made with another default (an older ragsweep's torch, or a GPU machine's) that keeps its backend and
its journal.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import describe

from ragsweep.config import backend_default, parse_spec
from ragsweep.config.embeddings import HFEmbeddingSpec
from ragsweep.config.evaluation import BERTScoreSpec
from ragsweep.errors import RagsweepError
from ragsweep.pipelines.grid import expand

ENV = backend_default.ENV
DEMO = {
    "name": "auto",
    "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}},
    "splitters": [{"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}],
    "retrievers": [{"kind": "bm25"}, {"kind": "vector"}],
    "top_k": [3],
    "scoring": {"bootstrap_samples": 100, "bertscore": {"baseline": "none"}},
}


@pytest.fixture
def cpu(monkeypatch):
    """This machine as one without a GPU, the pin of the suite lifted."""
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setattr(backend_default, "cuda_visible", lambda: None)


def test_the_default_follows_the_machine(cpu, monkeypatch):
    assert backend_default.machine_default() == (
        "onnx-int8",
        "no GPU: ONNX Runtime with int8 weights, the fastest on a CPU",
    )
    assert backend_default.machine_default("cuda:1")[0] == "torch"  # a section that names a GPU
    assert backend_default.machine_default("cpu")[0] == "onnx-int8"
    monkeypatch.setattr(backend_default, "cuda_visible", lambda: "/proc/driver/nvidia/gpus")
    assert backend_default.machine_default() == ("torch", "a GPU is visible (/proc/driver/nvidia/gpus)")
    assert backend_default.machine_default("cpu")[0] == "onnx-int8"
    monkeypatch.setenv(ENV, "onnx")
    assert backend_default.machine_default() == ("onnx", f"{ENV}=onnx")


def test_a_hidden_gpu_is_not_seen(monkeypatch):
    backend_default.cuda_visible.cache_clear()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    try:
        assert backend_default.cuda_visible() is None
    finally:
        backend_default.cuda_visible.cache_clear()


def test_an_unset_backend_resolves_once_and_reads_back_the_same(cpu):
    spec = parse_spec(DEMO)
    emb, bs = spec.embeddings[0], spec.scoring.bertscore
    assert (emb.backend, bs.backend) == ("onnx-int8", "onnx-int8")
    assert backend_default.is_auto(emb) and backend_default.is_auto(bs)
    assert emb.label() == "minilm"  # an unset backend adds nothing to the label: configuration ids stay put
    dumped = spec.model_dump(mode="json")
    assert dumped["embeddings"][0]["backend"] == "auto:onnx-int8" == dumped["scoring"]["bertscore"]["backend"]
    again = parse_spec(dumped, "manifest.json")  # a manifest's spec, read on any machine
    assert again == spec and [c.config_hash for c in expand(again)] == [c.config_hash for c in expand(spec)]
    assert HFEmbeddingSpec(backend="auto").backend == "onnx-int8" and BERTScoreSpec().backend == "onnx-int8"
    assert not backend_default.is_auto(HFEmbeddingSpec(backend="onnx-int8"))
    assert HFEmbeddingSpec(backend="onnx-int8").label() == "minilm-onnx-int8"


def test_ids_stay_and_a_torch_pin_gives_the_hashes_caches_were_written_under(cpu):
    """An existing run directory (made when unset meant torch) gets torch back: the same ids and hashes as a
    spec that says torch, so its journal and the caches stay valid."""
    auto = parse_spec(DEMO)
    torch = parse_spec({**DEMO, "embeddings": [{"model": "minilm", "backend": "torch"}]})
    pinned = backend_default.with_default(auto, "torch")
    assert [c.config_id for c in expand(auto)] == [c.config_id for c in expand(torch)]
    vector = [c for c in expand(auto) if c.embedding is not None]
    assert all(a.config_hash != t.config_hash for a, t in zip(vector, [c for c in expand(torch) if c.embedding]))
    assert [c.config_hash for c in expand(pinned)] == [c.config_hash for c in expand(torch)]
    assert pinned.scoring.bertscore.backend == "torch" and backend_default.is_auto(pinned.embeddings[0])
    assert backend_default.pinned(None) is None
    assert backend_default.pinned({"spec": {}}) == "torch"  # a manifest from before the record
    assert backend_default.pinned({"spec": {}, "backends": {"default": "onnx"}}) == "onnx"


def test_a_bad_default_is_one_line(cpu, monkeypatch, tmp_path):
    from ragsweep.config import load_spec

    monkeypatch.setenv(ENV, "gpu")
    path = tmp_path / "s.yaml"
    path.write_text("splitters: [{kind: token}]\nretrievers: [{kind: vector}]\n", encoding="utf-8")
    with pytest.raises(RagsweepError) as info:
        load_spec(path)
    msg = str(info.value)
    assert "\n" not in msg and f"{ENV}='gpu': use torch, onnx or onnx-int8" in msg


def test_a_cpu_sweep_runs_on_int8_and_an_existing_run_keeps_its_backend(cpu, run_cli, onnx_exports, tmp_path):
    """The CPU default end to end: validate and the run say what it runs on and why, the manifest records it;
    re-run with the default another machine (or an older ragsweep) gave the run directory, nothing is redone."""
    import yaml

    cache = tmp_path / "cache"
    shutil.copytree(onnx_exports / "onnx", cache / "onnx")  # the exports, made once for the suite
    spec = tmp_path / "auto.yaml"
    spec.write_text(yaml.safe_dump({**DEMO, "output_dir": str(tmp_path / "runs")}), encoding="utf-8")
    unset = (ENV,)
    r = run_cli("validate", spec, unset=unset)
    assert r.returncode == 0, describe(r)
    assert "backend: onnx-int8 (no GPU: ONNX Runtime with int8 weights" in r.stdout
    assert "sentence256-minilm-vector-k3" in r.stdout  # the id an unset backend always had

    # made "on a GPU machine": the default torch
    r = run_cli("run", spec, "--cache", cache, "--limit", "4", "--no-progress", env={ENV: "torch"})
    assert r.returncode == 0, describe(r)
    run_dir = tmp_path / "runs" / "auto"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["backends"] == {
        "embeddings": {"minilm": "torch"},
        "bertscore": "torch",
        "default": "torch",
        "why": f"{ENV}=torch",
    }
    # re-run here, where the default is onnx-int8: the run directory keeps torch and nothing is redone
    r = run_cli("run", spec, "--cache", cache, "--limit", "4", "--no-progress", unset=unset)
    assert r.returncode == 0, describe(r)
    assert f"note: backend torch, as {run_dir} was made with (a new run directory would get onnx-int8" in r.stdout
    after = json.loads((run_dir / "manifest.json").read_text())
    assert after["configurations"] == manifest["configurations"]  # the same hashes
    assert after["invocations"][-1]["answered"] == 0 and after["invocations"][-1]["embeddings_computed"] == 0
    # a fresh run directory gets the CPU default, in the manifest with why
    r = run_cli("run", spec, "--cache", cache, "--limit", "4", "--no-progress", "--fresh", unset=unset)
    assert r.returncode == 0, describe(r)
    assert "backend: onnx-int8 (no GPU" in r.stdout
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["backends"]["default"] == "onnx-int8" and manifest["backends"]["bertscore"] == "onnx-int8"
    assert manifest["spec"]["embeddings"][0]["backend"] == "auto:onnx-int8"
    assert manifest["bertscore"]["backend"] == "onnx-int8"
    assert not (cache / "onnx").joinpath("exporting").exists()
