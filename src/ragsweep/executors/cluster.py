"""Connecting to Ray, and refusing a cluster that cannot share what the sweep needs.

Workers reach the vector store and the graph store over the network, so those must be servers
every node can reach: an embedded Chroma directory or a loopback URL only works when every node
runs on the driver's host. Caches and the journal stay with the driver (see ``tasks``), so the
cache directory needs no shared filesystem.
"""

from __future__ import annotations

import logging
import os
import socket
from contextlib import contextmanager
from dataclasses import dataclass
from ipaddress import ip_address
from typing import Any, NamedTuple
from urllib.parse import urlparse

from ragsweep.errors import RagsweepError
from ragsweep.redact import redact_url


@dataclass(frozen=True)
class ClusterInfo:
    address: str  # what was connected to, or "local" for a Ray started for the run
    driver_host: str  # the IP Ray uses for this process's node
    hosts: tuple[str, ...]  # node IPs of the alive nodes, one per node
    cpus: int
    gpus: int = 0

    @property
    def other_hosts(self) -> list[str]:
        return sorted({h for h in self.hosts if h != self.driver_host})

    def describe(self) -> dict:
        return {
            "kind": "ray",
            "address": self.address,
            "nodes": len(self.hosts),
            "hosts": sorted(set(self.hosts)),
            "cpus": self.cpus,
            "gpus": self.gpus,
        }


def _reachable(address: str) -> None:
    """Fail in a second, not after Ray's long connection retries, when nothing listens at host:port."""
    if address == "auto" or address.startswith("ray://"):
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise RagsweepError(f"ray.address: {address!r} is not host:port, 'auto' or ray://host:port")
    try:
        socket.create_connection((host, int(port)), timeout=3).close()
    except OSError as exc:
        raise RagsweepError(
            f"ray.address: no Ray cluster answers at {address} ({exc.strerror or exc}); start one with "
            "`ray start --head --port PORT`, or leave the address out to start Ray on this machine"
        ) from None


def connect(ray_spec) -> ClusterInfo:
    """Join the cluster at ``ray_spec.address``, or start Ray on this machine for the run."""
    try:
        import ray
    except ImportError:
        raise RagsweepError(
            "executor: ray needs Ray installed; pip install 'ray>=2.30' (on every node), or use executor: local"
        ) from None
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    quiet: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": False, "include_dashboard": False}
    if ray.is_initialized():
        ray.shutdown()
    if ray_spec.address:
        _reachable(ray_spec.address)
        quiet.pop("include_dashboard")
        try:
            ray.init(address=ray_spec.address, **quiet)
        except Exception as exc:  # noqa: BLE001 - Ray raises several types for a cluster it cannot join
            raise RagsweepError(
                f"ray.address: cannot join the Ray cluster at {ray_spec.address} ({str(exc).splitlines()[0][:200]})"
            ) from None
        address = ray_spec.address
    else:
        ray.init(num_cpus=ray_spec.num_cpus, **quiet)
        address = "local"
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    cpus = int(sum(n.get("Resources", {}).get("CPU", 0) for n in nodes))
    if cpus < 1:
        ray.shutdown()
        raise RagsweepError(
            f"ray.address: the cluster at {address} has no CPU for tasks; start workers with "
            "`ray start --address HEAD:PORT --num-cpus N`"
        )
    gpus = int(sum(n.get("Resources", {}).get("GPU", 0) for n in nodes))
    driver = ray.util.get_node_ip_address()
    return ClusterInfo(address, driver, tuple(n["NodeManagerAddress"] for n in nodes), cpus, gpus)


def _loopback(host: str | None) -> bool:
    if host in (None, "localhost"):
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


def _local_models(spec) -> list:
    """Embedding and reranker entries that name a model directory on this machine."""
    from pathlib import Path

    entries = [*spec.embeddings, *spec.rerankers]
    return [e for e in entries if getattr(e, "model", "minilm") != "minilm" and Path(e.model).exists()]


def check_shared_state(spec, uses_vectors: bool, uses_neo4j: bool, cluster: ClusterInfo) -> None:
    """Refuse stores and models the cluster's tasks cannot reach, naming the setting and the fix."""
    gpu_wanted = [e.label() for e in spec.embeddings if str(getattr(e, "device", "") or "").startswith("cuda")]
    if gpu_wanted and not cluster.gpus:
        raise RagsweepError(
            f"embeddings[{gpu_wanted[0]}].device: cuda, but the Ray cluster at {cluster.address} has "
            "no GPU; start nodes with GPUs or leave device unset"
        )
    others = cluster.other_hosts
    if not others:
        return
    where = f"the Ray cluster at {cluster.address} has nodes on other hosts ({', '.join(others[:3])})"
    local = _local_models(spec)
    if local:
        section = "rerankers" if local[0] in spec.rerankers else "embeddings"
        raise RagsweepError(
            f"{section}[{local[0].label()}].model: {local[0].model} is a directory on this machine, "
            f"but {where}; give a hub id, which every node loads alike"
        )
    if uses_vectors and spec.vector_store.url is None:
        raise RagsweepError(
            f"vector_store: {where}, which cannot open an embedded Chroma directory; run a Chroma "
            "server every node reaches (`chroma run --path DIR --host 0.0.0.0 --port 8000`) and set "
            "vector_store.url"
        )
    if uses_vectors and _loopback(urlparse(spec.vector_store.url).hostname):
        raise RagsweepError(
            f"vector_store.url: {redact_url(spec.vector_store.url)} is a loopback address, but {where}; give the "
            "Chroma server's address on the network"
        )
    if uses_neo4j and _loopback(urlparse(spec.neo4j.url).hostname):
        raise RagsweepError(
            f"neo4j.url: {redact_url(spec.neo4j.url)} is a loopback address, but {where}; give the Neo4j "
            "server's address on the network"
        )


def with_absolute_model(entry):
    """A model spec (an embedding entry, ``scoring.bertscore``) with a local model path made absolute:
    workers do not share the driver's working directory (the model's cache key, a fingerprint of its
    files, does not change). Hub ids and ``minilm`` are returned as they are."""
    from pathlib import Path

    model = getattr(entry, "model", "minilm")
    if entry is None or model == "minilm" or not Path(model).exists():
        return entry
    return entry.model_copy(update={"model": str(Path(model).resolve())})


def with_absolute_models(config):
    """``config`` with its embeddings' and reranker's local model paths made absolute (``with_absolute_model``)."""
    from dataclasses import replace

    return replace(
        config,
        embedding=with_absolute_model(config.embedding),
        chunk_embedding=with_absolute_model(config.chunk_embedding),
        reranker=with_absolute_model(config.reranker),
    )


class RaySession(NamedTuple):
    worker_spec: object  # the spec as the workers (and the driver, while answering) use it
    cluster: ClusterInfo


@contextmanager
def ray_session(spec, configs, cache, console=None):
    """Connect, check, and serve an embedded Chroma directory on loopback when every node is on this host.
    Yields a RaySession."""
    import ray

    from ragsweep.pipelines.stages.graph import uses_neo4j

    cluster = connect(spec.ray)
    try:
        uses_vectors = any(c.embedding is not None for c in configs)
        check_shared_state(spec, uses_vectors, uses_neo4j(configs), cluster)
        if console is not None:
            console.print(f"ray: {cluster.address}, {len(cluster.hosts)} node(s), {cluster.cpus} CPU(s)")
        if uses_vectors and spec.vector_store.url is None:
            from ragsweep.retrievers.chroma_server import ChromaServer

            with ChromaServer(spec.vector_store.path or cache.chroma) as url:
                served = spec.vector_store.model_copy(update={"url": url})
                yield RaySession(spec.model_copy(update={"vector_store": served}), cluster)
        else:
            yield RaySession(spec, cluster)
    finally:
        ray.shutdown()
