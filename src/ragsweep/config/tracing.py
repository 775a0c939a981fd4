"""Where a sweep's and a served pipeline's spans go: an OTLP/HTTP trace endpoint (Arize Phoenix, an OpenTelemetry
Collector). Off unless given here or by the standard ``OTEL_EXPORTER_OTLP_*`` variables (``ragsweep.tracing``)."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from ragsweep.config.base import Strict


class TracingSpec(Strict):
    """OpenTelemetry spans named after the OpenInference conventions, so that Phoenix shows them as a RAG trace."""

    otlp: str | None = Field(
        None,
        description="an OTLP/HTTP trace endpoint, e.g. http://127.0.0.1:6006/v1/traces (Phoenix); "
        "unset: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT, else no tracing",
    )
    project: str | None = Field(None, description="the Phoenix project the spans go to; default: the sweep's name")
    session: str | None = Field(
        None, description="the session.id every span carries; default: the run directory's name (live for serve)"
    )

    @field_validator("otlp")
    @classmethod
    def _http_url(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^https?://[^/@\s?#]+(/[^\s?#]*)?$", v):
            raise ValueError(f"otlp {v!r} is not an http(s)://host:port/path URL without credentials or a query")
        return v
