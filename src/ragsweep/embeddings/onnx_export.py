"""ONNX exports of a sentence-transformers model's transformer, made once per model and kept in the cache.

Layout: ``<cache>/onnx/<model>-<hash>/fp32/model.onnx`` (the transformer traced by PyTorch's
TorchScript exporter: token ids and masks in, ``last_hidden_state`` out, batch and sequence
dynamic) and ``.../int8-v2/model.onnx`` (the fp32 file with dynamically quantized weights). The
directory is named by the model's identity (the bundled model's hub id, a local directory's
fingerprint, a hub id), the same identity its embedding cache key uses.

Several processes may load a model at once (Ray workers on one machine): the first takes a lock
and exports into a temporary directory beside the target, then renames the directory into
place, so a reader sees a complete file or none, and the others wait and reuse it.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import logging
import os
import re
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

from ragsweep.errors import RagsweepError

OPSET = 17
# bump when the export changes, so files written before are not reused; the ONNX backends' vector and pair cache
# keys carry it (``export_tag``), so vectors of two exports never mix. 2: BERT-family encoders written without
# PyTorch (``bert_graph``)
EXPORT_VERSION = 2
# bump when the int8 quantization changes: its files and cache keys only (fp32 vectors stay valid). 2: weights at
# 7 bits (``quantize_int8``), so a CPU without VNNI computes the int8 model's own vectors, not saturated ones
INT8_VERSION = 2


def export_tag(backend: str = "onnx") -> str:
    """What the ONNX backend ``backend``'s cache keys add: which export (and quantization) made its vectors and
    scores."""
    tag = f"export=v{EXPORT_VERSION}"
    return f"{tag}|int8=v{INT8_VERSION}" if PRECISIONS.get(backend) == "int8" else tag


MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "last_hidden_state"
PRECISIONS = {"onnx": "fp32", "onnx-int8": "int8"}
# The exports that failed in the current run (``failures_remembered``) by target, with their reason: a run tries a
# model's export once, not again when each stage loads it (each try is a child process importing PyTorch).
_FAILED: list[dict[Path, str]] = []
# Where a run says that it exports (``announced``): an export takes seconds and happens once per cache, so a user
# sees why the first run waits.
_SAY: list[Callable[[str], None]] = []


def export_path(cache_root: Path, identity: str, precision: str) -> Path:
    """Where the export of the model ``identity`` at ``precision`` (fp32, int8) lives."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", identity).strip("_")[-60:]
    digest = hashlib.sha256(f"{identity}|opset{OPSET}|v{EXPORT_VERSION}".encode()).hexdigest()[:10]
    folder = f"int8-v{INT8_VERSION}" if precision == "int8" else precision  # a new quantization: a new file
    return Path(cache_root) / "onnx" / f"{slug}-{digest}" / folder / "model.onnx"


def ensure_export(
    identity: str,
    precision: str,
    cache_root: Path,
    export: Callable[[Path], None],
    write_int8: Callable[[Path], None] | None = None,
) -> Path:
    """The ONNX file of the model ``identity`` at ``precision``, exported first if no process has yet;
    ``export(target)`` writes the fp32 file (``export_fp32``, ``export_module``), ``write_int8(target)`` (where
    given: ``int8_writer``) the int8 file without it, else the int8 file is the fp32 one quantized."""
    target = export_path(cache_root, identity, precision)
    if target.is_file():
        return target
    if _FAILED and target in _FAILED[-1]:
        raise RagsweepError(_FAILED[-1][target])
    try:
        return _export(target, precision, identity, cache_root, (export, write_int8))
    except RagsweepError as exc:
        if _FAILED:
            _FAILED[-1][target] = str(exc)
        raise


@contextlib.contextmanager
def announced(say: Callable[[str], None]) -> Iterator[None]:
    """Within this block, an export made says so through ``say`` when it starts and when it is done."""
    _SAY.append(say)
    try:
        yield
    finally:
        _SAY.pop()


def _say(line: str) -> None:
    if _SAY:
        _SAY[-1](line)


@contextlib.contextmanager
def failures_remembered() -> Iterator[None]:
    """Within this block (one run), an export that failed fails again at once with its reason, without a retry:
    the next run (a fixed model folder, say) tries anew."""
    _FAILED.append({})
    try:
        yield
    finally:
        _FAILED.pop()


def _export(target: Path, precision: str, identity: str, cache_root: Path, writers: tuple) -> Path:
    """``ensure_export``'s work: under the lock, into a temporary directory renamed into place."""
    export, write_int8 = writers
    quantized = precision == "int8" and write_int8 is None
    source = ensure_export(identity, "fp32", cache_root, export) if quantized else None
    home = target.parent.parent
    home.mkdir(parents=True, exist_ok=True)
    with _locked(home / f".{precision}.lock"):
        if target.is_file():  # another process finished it while this one waited
            return target
        for stale in home.glob(f".{precision}-*"):  # left by a killed export; the lock says none is running
            shutil.rmtree(stale, ignore_errors=True)
        work = Path(tempfile.mkdtemp(prefix=f".{precision}-", dir=home))
        t0 = time.perf_counter()
        what = "quantizing to int8" if source else "exporting" if precision == "fp32" else "writing int8"
        _say(f"ONNX: {what} {identity} into {home} (once per cache) ...")
        try:
            if source is not None:
                quantize_int8(source, work / target.name)
            else:
                (export if precision == "fp32" else write_int8)(work / target.name)
            os.chmod(work, 0o755)  # mkdtemp's 0700 would hide the export from other users of a shared cache
            os.replace(work, target.parent)
            _say(f"ONNX: {precision} model ready ({time.perf_counter() - t0:.1f} s)")
        except OSError:
            if not target.is_file():  # a lock-less platform where another process won the rename
                raise
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` (released when the process dies); none where fcntl is missing."""
    try:
        import fcntl
    except ImportError:  # Windows: the atomic rename alone keeps readers safe
        yield
        return
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


_CHILD = """
import sys, importlib
from ragsweep.errors import RagsweepError
try:
    getattr(importlib.import_module(sys.argv[1]), sys.argv[2])(*sys.argv[3:])
except RagsweepError as exc:
    print("ragsweep-error: " + str(exc), file=sys.stderr)
    sys.exit(2)
"""


def export_in_child(module: str, function: str, *args: object) -> None:
    """Run ``module.function(*args)`` (an export) in a fresh Python process.

    Exporting imports PyTorch, which would stay in this process's memory for good (about 600 MB
    resident on the CUDA build) although the ONNX backends never need it again; the child returns it
    to the system when it exits. Its RagsweepError comes back as this process's."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, module, function, *map(str, args)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        said = [ln[len("ragsweep-error: ") :] for ln in lines if ln.startswith("ragsweep-error: ")]
        raise RagsweepError(
            said[-1] if said else f"ONNX export failed in a child process: {(lines or ['no output'])[-1][:300]}"
        )


def int8_writer(model_dir: Path, num_layers: int | None = None) -> Callable[[Path], None] | None:
    """What writes the int8 export of the encoder in ``model_dir`` straight from its weights, without an fp32
    file and the quantizer (``bert_graph``: 0.2 s where they took 4.7 s, the same vectors bit for bit); None for
    a model ``bert_graph`` does not write (its fp32 export is quantized)."""
    from ragsweep.embeddings import bert_graph

    if not bert_graph.supported(model_dir):
        return None
    return lambda target: bert_graph.export_bert(model_dir, target, num_layers, precision="int8")


def export_fp32_fast(transformer_dir: Path, target: Path, field: str) -> None:
    """The fp32 export of a transformer: a BERT-family encoder written here without PyTorch (``bert_graph``: about
    a second, no 1.3 GB child process), any other model traced by PyTorch in a child process (``export_fp32``)."""
    from ragsweep.embeddings import bert_graph

    if bert_graph.supported(transformer_dir):
        bert_graph.export_bert(transformer_dir, target)
    else:
        export_in_child("ragsweep.embeddings.onnx_export", "export_fp32", transformer_dir, target, field)


def export_fp32(transformer_dir: Path, target: Path, field: str) -> None:
    """Trace the transformer with the TorchScript exporter (``dynamo=False``: no onnxscript needed).

    Traced with eager attention and a padded sample batch, so the attention-mask path is part of
    the graph (a batch without padding lets transformers skip the mask, and the trace would keep
    that shortcut for every input).
    """
    from transformers import AutoModel, AutoTokenizer

    transformer_dir, target = Path(transformer_dir), Path(target)
    try:
        tokenizer = AutoTokenizer.from_pretrained(transformer_dir)
        try:
            model = AutoModel.from_pretrained(transformer_dir, attn_implementation="eager")
        except (ValueError, TypeError):  # an architecture without a selectable attention
            model = AutoModel.from_pretrained(transformer_dir)
    except (OSError, ValueError) as exc:
        raise RagsweepError(
            f"{field}: cannot load the transformer of {transformer_dir} ({_first_line(exc)}); use backend: torch"
        ) from None
    export_module(model, tokenizer, target, field, transformer_dir.name)


def export_module(model, tokenizer, target: Path, field: str, name: str) -> None:
    """Trace a loaded transformer ``model`` (eager attention) into ``target``: token ids and masks in,
    ``last_hidden_state`` out, batch and sequence dynamic."""
    import torch

    model.eval()
    sample = tokenizer(
        ["an export sample", "a longer export sample, so that the first one is padded"],
        padding=True,
        return_tensors="pt",
    )
    accepted = inspect.signature(model.forward).parameters
    names = [n for n in MODEL_INPUTS if n in sample and n in accepted]

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            return self.model(**dict(zip(names, tensors))).last_hidden_state

    args = tuple(sample[n] for n in names)
    with torch.no_grad():
        out = getattr(model(**dict(zip(names, args))), OUTPUT, None)
        if "input_ids" not in names or out is None:
            raise RagsweepError(
                f"{field}: {name} is not a transformer encoder with token ids in and "
                f"{OUTPUT} out, which the ONNX backend exports; use backend: torch"
            )
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(
                    LastHiddenState(),
                    args,
                    str(target),
                    input_names=names,
                    output_names=[OUTPUT],
                    dynamic_axes={n: {0: "batch", 1: "sequence"} for n in [*names, OUTPUT]},
                    opset_version=OPSET,
                    dynamo=False,
                )
        except Exception as exc:  # the exporter raises many types; all mean the same to a user
            raise RagsweepError(
                f"{field}: cannot export {name} to ONNX ({_first_line(exc)}); use backend: torch"
            ) from None


def quantize_int8(source: Path, target: Path) -> None:
    """Dynamic int8 quantization (Jacob et al. 2018, "Quantization and Training of Neural Networks for
    Efficient Integer-Arithmetic-Only Inference", CVPR): weights stored as int8 with one scale per
    output channel, activations quantized per batch at run time. Per-channel scales keep MiniLM's
    vectors within cosine 0.98 of fp32 where one scale per tensor drops to 0.92 (BENCHMARKS.md).

    Weights use 7 bits (``reduce_range``): on a CPU without VNNI (AVX2 only), ONNX Runtime multiplies
    uint8 activations by int8 weights with ``vpmaddubsw``, whose int16 sums of two products saturate with
    8-bit weights, so the vectors depended on the CPU (min cosine to torch 0.977 on an AVX2 EPYC, 0.985
    on an AVX-512 VNNI CPU). At 7 bits no sum saturates: every CPU computes the same integer products."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with _quiet_root_logger():
        quantize_dynamic(source, target, weight_type=QuantType.QInt8, per_channel=True, reduce_range=True)


@contextlib.contextmanager
def _quiet_root_logger() -> Iterator[None]:
    """Drop what is logged to the root logger meanwhile: the quantizer advises pre-processing (which
    fails on these graphs) through ``logging.warning``, which would also install a root handler."""
    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers = [logging.NullHandler()]
    try:
        yield
    finally:
        root.handlers = saved


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
