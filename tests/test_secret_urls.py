"""Credentials inside URLs (``ragsweep.redact``): never written, never shown.

The unit tests pin ``redact_url`` (RFC 3986 userinfo, credential-named query and fragment parameters, byte for byte
elsewhere). The canary test runs a real sweep against the scripted OpenAI-compatible server (tests/fake_openai.py)
over HTTP with a canary secret in every URL of its spec (the generator's and the embedding's userinfo, the judge's
``?api_key=``, which the server answers with a 404 quoting it back, and an unused ``generate.llm``), tracks it in a
local MLflow store, reports it and exports it, then reads every byte written and every line printed for the
canaries."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import yaml
from conftest import BASE_SPEC, SENTENCE256, describe

from ragsweep.redact import is_redacted, redact, redact_text, redact_url, secrets_in, url_secrets

# --------------------------------------------------------------------------- redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:KEY@host/v1", "http://***@host/v1"),
        ("http://sk-ABCDEF@host:8000", "http://***@host:8000"),  # a user name alone is a token
        ("https://TOKEN:x-oauth-basic@github.com/o/r", "https://***@github.com/o/r"),  # so none of userinfo is kept
        ("http://u:p%40ss@h/", "http://***@h/"),
        ("http://a@b:pw@h/v1", "http://***@h/v1"),  # an unencoded @ in the password: the last @ ends userinfo
        ("http://u:p@[::1]:8080/v1", "http://***@[::1]:8080/v1"),
        ("postgresql://mlflow:pw@db.internal:5432/mlflow", "postgresql://***@db.internal:5432/mlflow"),
        ("http://h/v1?api_key=KEY", "http://h/v1?api_key=***"),
        ("http://h/v1?apikey=K&model=x&access_token=T", "http://h/v1?apikey=***&model=x&access_token=***"),
        (
            "https://b.s3.amazonaws.com/k?X-Amz-Credential=AK%2F1&X-Amz-Date=2024&X-Amz-Signature=ab12",
            "https://b.s3.amazonaws.com/k?X-Amz-Credential=***&X-Amz-Date=2024&X-Amz-Signature=***",
        ),
        (
            "https://acct.blob.core.windows.net/c?sv=2022&sig=abc%3D",
            "https://acct.blob.core.windows.net/c?sv=2022&sig=***",
        ),
        ("http://h/p?client_secret=s&password=p&Auth=a", "http://h/p?client_secret=***&password=***&Auth=***"),
        ("http://h/p?api_key=KEY#section", "http://h/p?api_key=***#section"),
        ("https://app/cb#access_token=T&state=xyz", "https://app/cb#access_token=***&state=xyz"),
        ("http://h/p#/callback?token=T", "http://h/p#/callback?token=***"),  # a client-side route's query
        ("http://h/p?token=", "http://h/p?token="),  # nothing to hide
    ],
)
def test_redact_url_hides_userinfo_and_credential_parameters(url, shown):
    assert redact_url(url) == shown
    assert redact_url(shown) == shown  # idempotent
    assert is_redacted(shown) == (shown != url)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1",
        "https://api.openai.com/v1/",
        "http://[::1]:8080/v1",
        "http://[2001:db8::1]/v1?model=a&b=c",
        "http://@host/v1",  # an empty userinfo holds nothing
        "http://h/p?",
        "http://h/p#",
        "http://h/p?a=1&&b=2;c=3#x",
        "HTTP://H/%7Euser/a%20b?q=%C3%A9",
        "sqlite:///mlflow.db",
        "file:./mlruns",
        "databricks",
        "bolt://127.0.0.1:7687",
        "ray://head:10001",
        "",
        "not a url at all: key=value & token",
        "/v1/chat/completions",
    ],
)
def test_a_url_without_a_secret_is_unchanged_byte_for_byte(url):
    assert redact_url(url) == url
    assert redact_text(url) == url
    assert url_secrets(url) == [] and not is_redacted(url)


def test_urls_in_text_and_in_structures():
    text = "cannot reach http://u:SECRET1@h:1/v1 (refused). See https://h/?token=SECRET2, or http://ok/v1."
    assert redact_text(text) == "cannot reach http://***@h:1/v1 (refused). See https://h/?token=***, or http://ok/v1."
    plain = 'no URL here; a path /v1?api_key=x is no URL; "quoted" <b>html</b>'
    assert redact_text(plain) == plain
    data = {"llm": {"base_url": "http://u:pw12@h/v1", "n": 3, "x": None}, "urls": ("https://h/?sig=abcd", 1.5)}
    assert redact(data) == {
        "llm": {"base_url": "http://***@h/v1", "n": 3, "x": None},
        "urls": ("https://h/?sig=***", 1.5),
    }
    assert redact({"http://tok@h": [True]}) == {"http://***@h": [True]}
    assert secrets_in(data) == ("pw12", "abcd")
    assert secrets_in({"u": "http://u:abc@h/?api_key=%2Bkey%2B"}) == ("%2Bkey%2B", "+key+")  # short ones left out


def test_url_secrets_are_what_a_message_may_quote():
    assert url_secrets("http://user:p%40ss@h/v1?api_key=K1&x=2") == ["p%40ss", "p@ss", "K1"]
    assert url_secrets("http://tok123@h") == ["tok123"]
    assert url_secrets("http://***@h/?api_key=***") == []  # a redacted URL holds none


def test_the_log_filter_redacts_a_logged_url():
    """``--verbose`` prints libraries' INFO lines; httpx's name each request's URL, an LLM base_url's key with it."""
    from ragsweep.library_logs import redact_record

    record = logging.LogRecord(
        "httpx", logging.INFO, __file__, 1, 'HTTP Request: %s %s "%s"', ("POST", "http://u:LOGKEY@h/v1", "200"), None
    )
    assert redact_record(record) and record.getMessage() == 'HTTP Request: POST http://***@h/v1 "200"'


def test_a_tracking_uri_with_a_token_is_refused_and_a_database_uri_redacted(tmp_path):
    from ragsweep.config.services import check_tracking_uri
    from ragsweep.errors import RagsweepError
    from ragsweep.tracking.mlflow_log import Tracked, track_run

    for uri in ("http://127.0.0.1:5000?token=TRACKTOKEN", "https://u:pw@mlflow.example"):
        with pytest.raises(ValueError, match="MLFLOW_TRACKING_TOKEN") as err:
            check_tracking_uri(uri)
        assert "TRACKTOKEN" not in str(err.value) and "pw@" not in str(err.value)
    db = "postgresql://ml:DBPASSWORD@db:5432/ml"
    assert check_tracking_uri(db) == db  # its password has nowhere else to go
    assert "DBPASSWORD" not in Tracked(db, "1", "r", 1, 0).line()
    with pytest.raises(RagsweepError, match="give the whole URI with --mlflow"):  # as `ragsweep track` reads it back
        track_run(tmp_path, redact_url(db))


def test_an_unreachable_chroma_server_is_named_without_its_token(get_free_port):
    from ragsweep.errors import RagsweepError
    from ragsweep.retrievers.chroma import client_for

    with pytest.raises(RagsweepError) as err:
        client_for(None, f"http://CHROMATOKEN@127.0.0.1:{get_free_port()}")
    assert "CHROMATOKEN" not in str(err.value) and "http://***@127.0.0.1:" in str(err.value)


def test_a_base_url_read_back_redacted_is_refused_in_one_line():
    """A spec read from a manifest or an export holds ``***`` where the credentials were: sending that is refused."""
    from ragsweep.config import LLMSpec, OpenAIEmbeddingSpec
    from ragsweep.embeddings.factory import model_key, require_api_key
    from ragsweep.errors import RagsweepError
    from ragsweep.llm.clients import refuse_redacted

    with pytest.raises(RagsweepError, match=r"stage2\.llm\.base_url http://\*\*\*@h/v1: its credentials were left"):
        refuse_redacted(LLMSpec(model="m", base_url="http://***@h/v1"), "stage2.llm")
    refuse_redacted(LLMSpec(model="m", base_url="http://h/v1?api_key=real"))  # as written: taken
    emb = OpenAIEmbeddingSpec(kind="openai", base_url="http://h/v1?api_key=***")
    with pytest.raises(RagsweepError, match="credentials were left out"):
        require_api_key(emb)
    # a URL's credentials are no part of the embedding's cache key: the stored spec reopens the same configuration
    secret = OpenAIEmbeddingSpec(kind="openai", base_url="http://h/v1?api_key=real")
    assert model_key(secret) == model_key(emb) == "openai|http://h/v1?api_key=***|text-embedding-3-small|"


# --------------------------------------------------------------------------- the canary sweep
CANARIES = {
    "llm": "cnry-llm-PW-5b8e1f",  # the generator's base_url password
    "embedding": "cnry-emb-TOKEN-9d2c7a",  # the embedding endpoint's user name (a token)
    "judge": "cnry-judge-QUERY-3e6b0d",  # the judge's ?api_key=, quoted back by the server's 404
    "generate": "cnry-gen-ACCESS-7a1f4c",  # an endpoint the sweep never calls: stored with the spec only
    "env": "sk-cnry-ENVKEY-2c9e5b",  # the API key in $CANARY_KEY (scrubbed before this issue)
}


def _leaks(root: Path) -> list[str]:
    """``file: canary`` for every canary found in a file under ``root`` (raw bytes, and every value of a parquet
    file, whose pages may be compressed)."""
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.suffix == ".parquet":
            import pandas as pd

            data += pd.read_parquet(path).to_json().encode()
        found += [f"{path}: {name}" for name, c in CANARIES.items() if c.encode() in data]
    return found


def test_no_url_credential_is_written_or_shown_anywhere(run_cli, tmp_path, monkeypatch):
    from fake_openai import FakeOpenAI

    import ragsweep
    from ragsweep.errors import RagsweepError

    spec_dir, out = tmp_path / "spec", tmp_path / "out"
    spec_dir.mkdir()
    out.mkdir()
    with FakeOpenAI().start() as fake:
        host = f"127.0.0.1:{fake.port}"
        data = {
            **BASE_SPEC,
            "name": "canary",
            "output_dir": str(out / "runs"),
            "splitters": [SENTENCE256],
            "embeddings": [
                {
                    "kind": "openai",
                    "name": "fakeemb",
                    "model": "fake-embedding",
                    "base_url": f"http://{CANARIES['embedding']}@{host}/v1",
                    "api_key_env": "CANARY_KEY",
                }
            ],
            "retrievers": [{"kind": "vector"}],
            "top_k": [3],
            "generator": {"kind": "llm"},
            "llm": {
                "model": "canary-gen",
                "base_url": f"http://canary-user:{CANARIES['llm']}@{host}/v1",
                "api_key_env": "CANARY_KEY",
            },
            "stage2": {
                "top_n": 1,
                "judges": ["correctness"],
                "llm": {"model": "canary-judge", "base_url": f"http://{host}/v1?api_key={CANARIES['judge']}"},
            },
            "generate": {
                "llm": {"model": "g", "base_url": f"https://gen.example/v1?access_token={CANARIES['generate']}"}
            },
            "tracking": {"mlflow": f"sqlite:///{out}/mlflow.db"},
        }
        spec = spec_dir / "canary.yaml"
        spec.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        env = {"CANARY_KEY": CANARIES["env"], "OPENAI_API_KEY": CANARIES["env"]}
        procs = [run_cli("run", spec, "--cache", out / "cache", "--limit", 4, env=env, cwd=out)]
        run_dir = out / "runs" / "canary"
        assert (run_dir / "manifest.json").is_file(), describe(procs[0])
        # the judge's 404 stops stage 2 in one line (exit 2) after stage 1's outputs, tracked, are written
        assert procs[0].returncode == 2 and "error: LLM endpoint" in procs[0].stderr, describe(procs[0])
        procs.append(run_cli("show", run_dir, env=env, cwd=out))
        procs.append(run_cli("report", run_dir, env=env, cwd=out))
        assert procs[-1].returncode == 0, describe(procs[-1])
    folder = ragsweep.export_pipeline(run_dir, None, out / "export").root

    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["spec"]["llm"]["base_url"] == f"http://***@{host}/v1"  # still says where it ran
    assert manifest["spec"]["stage2"]["llm"]["base_url"] == f"http://{host}/v1?api_key=***"
    # the server quoted the judge's key back in its 404 (no URL around it): scrubbed as one of the spec's secrets
    assert "Unknown path /v1?api_key=***/chat/completions" in procs[0].stderr
    written = {p.relative_to(out).parts[0] for p in out.rglob("*") if p.is_file()}
    assert {"runs", "cache", "mlruns", "mlflow.db", "export"} <= written, written  # every place was written
    assert list((out / "mlruns").rglob("report.html")) and (run_dir / "report.html").is_file()
    assert _leaks(out) == []
    printed = "\n".join(p.stdout + p.stderr for p in procs)
    assert [name for name, c in CANARIES.items() if c in printed] == []

    monkeypatch.setenv("CANARY_KEY", CANARIES["env"])
    with pytest.raises(RagsweepError) as err:  # the folder's spec holds no credentials: said in one line
        ragsweep.load_pipeline(folder).ask("What is a duty?")
    assert "credentials were left out" in str(err.value) and "\n" not in str(err.value)
    assert [name for name, c in CANARIES.items() if c in str(err.value)] == []
