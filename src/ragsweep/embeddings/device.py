"""Where models run: one resolver for the embedding models (PyTorch and ONNX Runtime) and BERTScore.

A spec that leaves ``device`` unset gets the GPU when torch sees one, so the same spec runs on a
laptop and on a GPU machine without edits. HuggingFaceEmbedding and bert-score guess the same way
on their own; resolving here makes the choice explicit, testable, and shared by the ONNX path,
which has to name ONNX Runtime execution providers instead of a torch device.
"""

from __future__ import annotations

import os


def resolve_device(device: str | None) -> str:
    """``device`` as given, else ``"cuda"`` when torch sees a GPU, ``"mps"`` on Apple silicon, else ``"cpu"``."""
    if device:
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


def resolve_onnx_device(device: str | None) -> str:
    """``device`` as given, else ``"cuda"`` when this onnxruntime build has its CUDA provider, else
    ``"cpu"``: the ONNX backends' own default, which does not import PyTorch to ask."""
    if device:
        return device
    import onnxruntime as ort

    return "cuda" if "CUDAExecutionProvider" in ort.get_available_providers() else "cpu"


def available_cores() -> int:
    """Threads a model may use: ``OMP_NUM_THREADS`` when set (torch honours it too, and Ray sets it to
    a task's CPUs, so two tasks on two cores do not run four threads), else the CPU cores this
    process may run on (its affinity mask, which containers and taskset narrow)."""
    omp = os.environ.get("OMP_NUM_THREADS", "")
    if omp.isdigit() and int(omp) > 0:
        return int(omp)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def onnx_providers(device: str) -> list:
    """ONNX Runtime execution providers for a resolved device: CUDA (then CPU for unsupported ops)
    when the device is a CUDA one and this onnxruntime build has the CUDA provider, else the CPU."""
    import onnxruntime as ort

    if device.startswith("cuda") and "CUDAExecutionProvider" in ort.get_available_providers():
        index = int(device.split(":", 1)[1]) if ":" in device else 0
        return [("CUDAExecutionProvider", {"device_id": index}), "CPUExecutionProvider"]
    return ["CPUExecutionProvider"]
