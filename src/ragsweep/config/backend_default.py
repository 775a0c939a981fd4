"""What a ``backend`` left unset means: the fast path of the machine the spec is read on.

An embedding or the BERTScore encoder runs on PyTorch, on ONNX Runtime (``onnx``: the same vectors to float32
precision) or on ONNX Runtime with int8 weights (``onnx-int8``). On a CPU the int8 model is 3x PyTorch's speed,
and its rankings agree within the tolerance measured in BENCHMARKS ("Embedding backends", "BERTScore backends",
"Stage 1 at the floor"); PyPI's ``onnxruntime`` runs on the CPU only, so with a GPU PyTorch is faster. Hence:

- ``RAGSWEEP_DEFAULT_BACKEND`` set (torch, onnx or onnx-int8): that;
- else a section whose ``device`` names a GPU (``cuda``, ``mps``...), or a GPU visible on the machine (the NVIDIA
  driver's, Apple silicon's): ``torch``;
- else ``onnx-int8`` (on every CPU: on one without VNNI it runs at about fp32's speed, BENCHMARKS "Stage 1 on the
  default path", but a default chosen by CPU flags would make configuration hashes and caches depend on the
  machine; its 7-bit weights agree with torch within the measured bounds on every CPU).

A spec's unset backend is resolved once, when the spec is read (``AutoBackend``, the sections' base), so
everything downstream (cache keys, configuration hashes) sees one concrete value; the section remembers it was
unset (``is_auto``; a dump says ``auto:onnx-int8``), so that ``pinned`` can give a run directory made with
another default (an older ragsweep: ``torch``) the backend it was made with, and its journal stays valid.
Configuration ids do not change: an unset backend adds nothing to an embedding's label.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragsweep.run_records import Manifest

import os
import platform
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import PrivateAttr, field_serializer, model_validator

from ragsweep.config.base import Strict

BACKENDS = ("torch", "onnx", "onnx-int8")
ENV = "RAGSWEEP_DEFAULT_BACKEND"
CPU_DEFAULT = "onnx-int8"
AUTO = "auto"  # what ``backend: auto`` (or leaving it out) says; dumped as ``auto:<the value it got>``
BEFORE = "torch"  # what an unset backend meant before it followed the machine (run directories made then)


@lru_cache(maxsize=1)
def cuda_visible() -> str | None:
    """Where a GPU PyTorch would use shows itself, without importing PyTorch: the NVIDIA driver's device list, or
    Apple silicon (MPS); else None. ``CUDA_VISIBLE_DEVICES`` set empty or to -1 hides a CUDA GPU, as from PyTorch."""
    hidden = os.environ.get("CUDA_VISIBLE_DEVICES")
    if hidden is not None and hidden.strip() in ("", "-1", "none", "NoDevFiles"):
        return None
    gpus = Path("/proc/driver/nvidia/gpus")
    try:
        if gpus.is_dir() and any(gpus.iterdir()):
            return str(gpus)
    except OSError:
        pass
    if Path("/dev/nvidia0").exists():
        return "/dev/nvidia0"
    if platform.system() == "Darwin" and platform.machine() == "arm64":
        return "Apple silicon: PyTorch's MPS"
    return None


def machine_default(device: str | None = None) -> tuple[str, str]:
    """(backend, why) for a section with ``device`` whose backend is unset."""
    chosen = os.environ.get(ENV, "").strip()
    if chosen:
        if chosen not in BACKENDS:
            raise ValueError(f"{ENV}={chosen!r}: use torch, onnx or onnx-int8 (or unset it)")
        return chosen, f"{ENV}={chosen}"
    if device and device != "cpu":
        return "torch", f"device {device}"
    if device is None and (where := cuda_visible()):
        return "torch", f"a GPU is visible ({where})"
    return CPU_DEFAULT, "no GPU: ONNX Runtime with int8 weights, the fastest on a CPU"


class AutoBackend(Strict):
    """A section with a ``backend`` that may be left unset (``auto``): resolved when the section is parsed and
    remembered as unset, also through a dump (``auto:onnx-int8``, read back as the same), so that a manifest's
    spec gives the same configurations, ids and hashes on any machine."""

    _auto_backend: bool = PrivateAttr(False)
    backend: str  # declared by each section, with its choices and description

    @model_validator(mode="wrap")
    @classmethod
    def _machine_backend(cls, data: Any, handler):
        auto = False
        if isinstance(data, dict):
            value = data.get("backend")
            if value is None or value == AUTO:  # unset: the default (None) says so
                data = {k: v for k, v in data.items() if k != "backend"}
            elif isinstance(value, str) and value.startswith(AUTO + ":"):
                data, auto = {**data, "backend": value[len(AUTO) + 1 :]}, True
        section = handler(data)
        if section.backend is None:
            object.__setattr__(section, "backend", machine_default(getattr(section, "device", None))[0])
            auto = True
        if auto:
            section._auto_backend = True
        return section

    @field_serializer("backend", check_fields=False)
    def _dump_backend(self, value: str | None) -> str | None:
        return f"{AUTO}:{value}" if self._auto_backend else value


def is_auto(section) -> bool:
    return bool(getattr(section, "_auto_backend", False))


def auto_sections(spec) -> list:
    """The spec's sections whose backend was left unset: sentence-transformers embeddings and BERTScore."""
    out = [e for e in spec.embeddings if is_auto(e)]
    return out + ([spec.scoring.bertscore] if is_auto(spec.scoring.bertscore) else [])


def with_default(spec, backend: str):
    """``spec`` with every unset backend given ``backend`` instead (sections that set one keep theirs)."""
    if all(s.backend == backend for s in auto_sections(spec)):
        return spec

    def again(section):
        return section.model_copy(update={"backend": backend}) if is_auto(section) else section

    scoring = spec.scoring.model_copy(update={"bertscore": again(spec.scoring.bertscore)})
    return spec.model_copy(update={"embeddings": [again(e) for e in spec.embeddings], "scoring": scoring})


def record(spec) -> dict:
    """The manifest's ``backends``: what each model runs on and, where it was left unset, why."""
    bs = spec.scoring.bertscore
    auto = auto_sections(spec)
    return {
        "embeddings": {e.label(): e.backend for e in spec.embeddings if e.kind == "sentence_transformers"},
        "bertscore": bs.backend,
        "default": auto[0].backend if auto else None,
        "why": _why(auto[0]) if auto else None,
    }


def _why(section) -> str:
    backend, why = machine_default(getattr(section, "device", None))
    return why if section.backend == backend else "the backend the run directory was made with"


def pinned(manifest: Manifest | None) -> str | None:
    """The backend an existing run directory's unset backends had (its manifest's), None without a manifest or
    where none was unset; a manifest from before this record was written had ``BEFORE``."""
    if not manifest or "spec" not in manifest:
        return None
    if "backends" not in manifest:
        return BEFORE
    return manifest["backends"].get("default")


def pinned_spec(spec, previous: Manifest | None, run_dir: str):
    """(``spec`` with the backend its unset ones had when the run directory was made, a note saying so, or None)
    given that directory's manifest (``previous``; None or {} for a new one)."""
    pin = pinned(previous)
    auto = auto_sections(spec)
    if pin is None or not auto or all(s.backend == pin for s in auto):
        return spec, None
    note = (
        f"backend {pin}, as {run_dir} was made with (a new run directory would get {auto[0].backend}; "
        "set the spec's backend to choose)"
    )
    return with_default(spec, pin), note


def line(spec) -> str:
    """One line for ``validate`` and the run's start: what the models run on, and why where it was left unset."""
    rec = record(spec)
    used = sorted(set(rec["embeddings"].values()) | {rec["bertscore"]})
    if rec["default"] is None:
        return f"backend: {', '.join(used)} (as the spec sets)"
    also = [b for b in used if b != rec["default"]]
    return (
        f"backend: {rec['default']} ({rec['why']}){'; also ' + ', '.join(also) + ' as the spec sets' if also else ''}; "
        "set embeddings[].backend and scoring.bertscore.backend to choose"
    )
