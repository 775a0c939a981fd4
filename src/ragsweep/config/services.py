"""The servers and clusters a sweep uses: the vector store, Neo4j, Ray."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator, model_validator

from ragsweep.components import Named
from ragsweep.config.base import Strict, env_var_name

# the executors, one module each in ``ragsweep.executors`` (a context manager that opens a ``base.Executor``): a
# new one is its module and a line here. Capability: cluster (joins a cluster: ``ray.address``, ``--ray-address``).
EXECUTORS: dict[str, Named] = {
    "local": Named("ragsweep.executors.local:open_local"),
    "ray": Named("ragsweep.executors.ray:open_ray", ("cluster",)),
}
if TYPE_CHECKING:
    EXECUTOR_NAMES = str
else:
    EXECUTOR_NAMES = Literal[tuple(EXECUTORS)]


class VectorStoreSpec(Strict):
    """Chroma, embedded in ``path`` (default: inside the cache) or a server at ``url``."""

    kind: Literal["chroma"] = "chroma"
    path: Path | None = Field(None, description="an embedded Chroma directory; default: inside the cache")
    url: str | None = Field(None, description="a Chroma server, e.g. http://host:8000 (instead of path)")

    @model_validator(mode="after")
    def _one_location(self) -> "VectorStoreSpec":
        if self.path is not None and self.url is not None:
            raise ValueError("give either path (embedded Chroma) or url (Chroma server), not both")
        if self.url is not None and not re.match(r"^https?://[^/:]+(:\d+)?/?$", self.url):
            raise ValueError(f"url {self.url!r} is not of the form http://host:port")
        return self


class Neo4jSpec(Strict):
    """A Neo4j 5.x server with the APOC core plugin, by Bolt URL; credentials are read from the
    environment variables named here (``scripts/neo4j.sh`` runs one on loopback)."""

    url: str = Field("bolt://127.0.0.1:7687", description="the Neo4j server (bolt://, neo4j://)")
    username_env: str = Field("NEO4J_USER", description="the environment variable holding the user name")
    password_env: str = Field("NEO4J_PASSWORD", description="the environment variable holding the password")
    database: str = Field("neo4j", description="the database graphs are written to")
    timeout: float = Field(30.0, gt=0, description="seconds per query")

    _env_names = field_validator("username_env", "password_env")(classmethod(lambda cls, v: env_var_name(v)))

    @field_validator("url")
    @classmethod
    def _bolt(cls, v: str) -> str:
        if not re.match(r"^(bolt|neo4j)(\+s|\+ssc)?://[^/:]+(:\d+)?/?$", v):
            raise ValueError(f"url {v!r} is not of the form bolt://host:port (or neo4j://, bolt+s://)")
        return v


class RaySpec(Strict):
    """Where and how a sweep runs with ``executor: ray``."""

    address: str | None = Field(
        None,
        description="a running cluster ('auto', 'host:port', 'ray://host:port'); "
        "default: start Ray on this machine for the run",
    )
    questions_per_task: int | None = Field(
        None, gt=0, description="questions per answering task; default: about four tasks per CPU of the cluster"
    )
    num_cpus: int | None = Field(None, gt=0, description="CPUs of a Ray started for the run (default: all)")


class TrackingSpec(Strict):
    """Where a finished run is logged for experiment tracking: an MLflow tracking server (``ragsweep track``
    logs a run later). Credentials come from MLflow's own environment variables (``MLFLOW_TRACKING_USERNAME``
    and ``MLFLOW_TRACKING_PASSWORD``, or ``MLFLOW_TRACKING_TOKEN``), never from the spec, so no secret is
    written to the manifest."""

    mlflow: str | None = Field(
        None,
        description="an MLflow tracking URI: http(s)://host:port (a tracking server), file:./mlruns, "
        "sqlite:///mlflow.db, databricks",
    )
    experiment: str | None = Field(None, description="the MLflow experiment; default: the spec's name")

    @field_validator("mlflow")
    @classmethod
    def _no_credentials(cls, v: str | None) -> str | None:
        return None if v is None else check_tracking_uri(v)


def check_tracking_uri(uri: str) -> str:
    """``uri`` if it names a tracker without credentials in it; ValueError (one line, the fix) otherwise. A
    database URI (``postgresql://user:password@host/db``) has nowhere else to hold its password: it is taken, and
    redacted wherever it is stored or shown (``ragsweep.redact``)."""
    from urllib.parse import urlsplit

    from ragsweep.redact import redact_url

    uri = uri.strip()
    if not uri:
        raise ValueError("the MLflow tracking URI is empty")
    parts = urlsplit(uri)
    if parts.scheme in ("http", "https") and redact_url(uri) != uri:  # userinfo, or ?token= and the like
        raise ValueError(
            "the MLflow tracking URI holds credentials; put them in MLFLOW_TRACKING_USERNAME and "
            "MLFLOW_TRACKING_PASSWORD (or MLFLOW_TRACKING_TOKEN) instead"
        )
    if parts.scheme in ("http", "https") and not parts.hostname:
        raise ValueError(f"the MLflow tracking URI {uri!r} names no host (http://host:port)")
    return uri
