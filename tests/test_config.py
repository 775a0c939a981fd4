"""The sweep spec: loading, grid expansion, config hashes, and the one-line errors users see."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsweep.config import (
    FusionSpec,
    JsonlCorpus,
    PatternSplitterSpec,
    SemanticSplitterSpec,
    TableQuestions,
    load_spec,
    parse_spec,
)
from ragsweep.errors import RagsweepError
from ragsweep.pipelines.grid import expand

ROOT = Path(__file__).resolve().parents[1]
DEMO_SPEC = ROOT / "specs" / "demo.yaml"

MINIMAL = """\
splitters:
  - {kind: token}
retrievers:
  - {kind: bm25}
"""


def write(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def load_error(path: Path) -> str:
    """Load ``path``, expect a RagsweepError, check it is one line naming the file; return it."""
    with pytest.raises(RagsweepError) as info:
        load_spec(path)
    msg = str(info.value)
    assert "\n" not in msg and "\r" not in msg, f"error message is not one line: {msg!r}"
    assert msg.startswith(f"{path}: "), f"error does not start with the file name: {msg!r}"
    assert "Traceback" not in msg and "pydantic" not in msg.lower()
    return msg


def field_of(msg: str, path: Path) -> str:
    """The text right after ``<file>: `` up to the next ``: `` (the field path)."""
    rest = msg[len(f"{path}: ") :]
    return rest.split(": ", 1)[0]


# --------------------------------------------------------------------------- valid specs
def test_demo_spec_loads_and_expands_to_30_configurations():
    spec = load_spec(DEMO_SPEC)
    assert spec.name == "demo"
    assert [s.label() for s in spec.splitters] == ["token128", "sentence256", "recursive800", "semantic", "pattern"]
    assert [e.label() for e in spec.embeddings] == ["minilm"]
    assert [r.label() for r in spec.retrievers] == ["bm25", "vector", "fusion", "kg", "hybrid-kg"]
    assert spec.top_k == [3, 5]
    pattern = spec.splitters[4]
    assert isinstance(pattern, PatternSplitterSpec)
    assert pattern.pattern == "\\n(?=§)" and pattern.max_chunk_chars == 1500

    configs = expand(spec)
    ids = [c.config_id for c in configs]
    assert len(configs) == 50
    assert len(set(ids)) == 50
    assert ids[:6] == [
        "token128-bm25-k3",
        "token128-bm25-k5",
        "token128-minilm-vector-k3",
        "token128-minilm-vector-k5",
        "token128-minilm-fusion-k3",
        "token128-minilm-fusion-k5",
    ]
    assert "sentence256-minilm-fusion-k5" in ids
    assert "pattern-bm25-k3" in ids
    # BM25 configurations carry no embedding; the semantic splitter still chunks with MiniLM.
    by_id = {c.config_id: c for c in configs}
    assert by_id["token128-bm25-k3"].embedding is None
    assert by_id["semantic-bm25-k3"].embedding is None
    assert by_id["semantic-bm25-k3"].chunk_embedding.label() == "minilm"
    assert by_id["semantic-bm25-k3"].chunk_key == "semantic@minilm"
    assert by_id["token128-minilm-vector-k5"].chunk_key == "token128"
    assert by_id["token128-minilm-vector-k5"].chunk_key == "token128"
    assert by_id["token128-minilm-vector-k5"].embedding.label() == "minilm"


GRID_12 = """\
name: grid
splitters:
  - {kind: token, chunk_size: 64, chunk_overlap: 8}
  - {kind: sentence, chunk_size: 128}
embeddings:
  - {kind: sentence_transformers, model: minilm}
  - {kind: sentence_transformers, model: BAAI/bge-small-en-v1.5}
retrievers:
  - {kind: bm25}
  - {kind: vector}
top_k: [5, 3]
"""


def test_grid_bm25_is_not_multiplied_by_embeddings(tmp_path):
    spec = load_spec(write(tmp_path, GRID_12))
    assert spec.top_k == [3, 5]  # sorted
    configs = expand(spec)
    # 2 splitters x (1 bm25 + 1 vector x 2 embeddings) x 2 top_k
    assert len(configs) == 2 * (1 + 2) * 2 == 12
    assert [c.config_id for c in configs] == [
        "token64-bm25-k3",
        "token64-bm25-k5",
        "token64-minilm-vector-k3",
        "token64-minilm-vector-k5",
        "token64-bgesmallenv15-vector-k3",
        "token64-bgesmallenv15-vector-k5",
        "sentence128-bm25-k3",
        "sentence128-bm25-k5",
        "sentence128-minilm-vector-k3",
        "sentence128-minilm-vector-k5",
        "sentence128-bgesmallenv15-vector-k3",
        "sentence128-bgesmallenv15-vector-k5",
    ]
    assert [c.top_k for c in configs[:2]] == [3, 5]
    assert len({c.config_hash for c in configs}) == 12


def test_fusion_with_two_embeddings_and_names(tmp_path):
    text = """\
splitters:
  - {kind: recursive, chunk_size: 300, name: rec}
  - {kind: semantic, embedding: small}
embeddings:
  - {kind: sentence_transformers, model: minilm}
  - {kind: sentence_transformers, model: minilm, name: small, query_prefix: 'q: '}
retrievers:
  - {kind: bm25}
  - {kind: fusion, mode: relative_score, weights: [0.7, 0.3]}
"""
    spec = load_spec(write(tmp_path, text))
    configs = expand(spec)
    assert len(configs) == 2 * (1 + 2) * 1
    ids = [c.config_id for c in configs]
    assert ids[:3] == ["rec-bm25-k5", "rec-minilm-fusion-rel-w0.7-0.3-k5", "rec-small-fusion-rel-w0.7-0.3-k5"]
    # the semantic splitter names its chunking embedding: every configuration chunks with it
    sem = [c for c in configs if c.config_id.startswith("semantic-")]
    assert {c.chunk_key for c in sem} == {"semantic@small"}


def test_config_hash_is_stable_across_loads(tmp_path):
    p = write(tmp_path, GRID_12)
    first = {c.config_id: c.config_hash for c in expand(load_spec(p))}
    second = {c.config_id: c.config_hash for c in expand(load_spec(p))}
    assert first == second
    assert all(len(h) == 12 and int(h, 16) >= 0 for h in first.values())
    # same spec written in a different layout / key order hashes the same
    reordered = GRID_12.replace(
        "{kind: token, chunk_size: 64, chunk_overlap: 8}", "{chunk_overlap: 8, kind: token, chunk_size: 64}"
    )
    third = {c.config_id: c.config_hash for c in expand(load_spec(write(tmp_path, reordered, "b.yaml")))}
    assert third == first


def test_config_hash_changes_when_a_parameter_changes_but_id_does_not(tmp_path):
    base = {c.config_id: c.config_hash for c in expand(load_spec(write(tmp_path, GRID_12)))}
    edited = GRID_12.replace("chunk_overlap: 8", "chunk_overlap: 9")
    after = {c.config_id: c.config_hash for c in expand(load_spec(write(tmp_path, edited, "edit.yaml")))}
    assert set(after) == set(base)  # ids are unchanged by an overlap edit...
    for cid in base:  # ...but the hash of every token64 configuration changes, and only those
        assert (after[cid] != base[cid]) == cid.startswith("token64-"), cid

    gen = GRID_12 + "generator: {max_sentences: 3}\n"
    after_gen = {c.config_id: c.config_hash for c in expand(load_spec(write(tmp_path, gen, "gen.yaml")))}
    assert all(after_gen[cid] != base[cid] for cid in base)


def test_config_hash_ignores_names_batch_sizes_and_devices(tmp_path):
    """Settings that cannot change results must not invalidate journaled results or cached chunks."""
    base = [c.config_hash for c in expand(load_spec(write(tmp_path, GRID_12)))]
    cosmetic = (
        GRID_12.replace(
            "{kind: sentence_transformers, model: minilm}",
            "{kind: sentence_transformers, model: minilm, batch_size: 8, device: cpu}",
        )
        .replace("{kind: vector}", "{kind: vector, name: dense}")
        .replace("{kind: sentence, chunk_size: 128}", "{kind: sentence, chunk_size: 128, name: sent}")
    )
    configs = expand(load_spec(write(tmp_path, cosmetic, "cosmetic.yaml")))
    assert "sent-minilm-dense-k3" in {c.config_id for c in configs}  # the ids follow the names...
    assert [c.config_hash for c in configs] == base  # ...the hashes do not


def test_parse_spec_round_trips_a_dumped_spec():
    spec = load_spec(DEMO_SPEC)
    again = parse_spec(spec.model_dump(mode="json"), "manifest.json")
    assert again == spec
    assert [c.config_hash for c in expand(again)] == [c.config_hash for c in expand(spec)]


def test_defaults_of_a_minimal_spec(tmp_path):
    spec = load_spec(write(tmp_path, MINIMAL))
    assert spec.name == "sweep"
    assert spec.top_k == [5]
    assert spec.dataset.corpus.format == "demo"
    assert [c.config_id for c in expand(spec)] == ["token256-bm25-k5"]


# --------------------------------------------------------------------------- dataset paths
def _dataset_files(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text(json.dumps({"id": "a", "text": "Alpha text."}) + "\n", encoding="utf-8")
    (folder / "questions.jsonl").write_text(
        json.dumps({"id": "q1", "question": "What?", "reference_answer": "Alpha."}) + "\n", encoding="utf-8"
    )


DATASET_SPEC = (
    MINIMAL
    + """\
dataset:
  corpus: {format: jsonl, path: data/corpus.jsonl}
  questions: {format: jsonl, path: data/questions.jsonl}
"""
)


def test_relative_dataset_paths_resolve_against_the_spec_directory(tmp_path, monkeypatch):
    specdir = tmp_path / "project"
    _dataset_files(specdir / "data")
    p = write(specdir, DATASET_SPEC)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    for how in (p, Path("..") / "project" / "spec.yaml"):
        spec = load_spec(how)
        assert isinstance(spec.dataset.corpus, JsonlCorpus)
        assert isinstance(spec.dataset.questions, TableQuestions)
        assert spec.dataset.corpus.path == (specdir / "data" / "corpus.jsonl").resolve()
        assert spec.dataset.questions.path == (specdir / "data" / "questions.jsonl").resolve()
        assert spec.dataset.corpus.path.is_absolute()


def test_absolute_dataset_path_is_kept(tmp_path):
    _dataset_files(tmp_path / "abs")
    corpus = (tmp_path / "abs" / "corpus.jsonl").resolve()
    text = MINIMAL + f"dataset:\n  corpus: {{format: jsonl, path: '{corpus}'}}\n"
    (tmp_path / "other").mkdir()
    spec = load_spec(write(tmp_path / "other", text))
    assert spec.dataset.corpus.path == corpus


def test_missing_dataset_file_names_field_and_resolved_path(tmp_path, monkeypatch):
    specdir = tmp_path / "project"
    _dataset_files(specdir / "data")
    p = write(specdir, DATASET_SPEC.replace("data/corpus.jsonl", "data/corpus_missing.jsonl"))
    # the file exists relative to the cwd but not next to the spec: must still be an error
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "corpus_missing.jsonl").write_text("{}\n", encoding="utf-8")
    msg = load_error(p)
    assert field_of(msg, p) == "dataset.corpus.path"
    assert str((specdir / "data" / "corpus_missing.jsonl").resolve()) in msg
    assert "does not exist" in msg


def test_missing_questions_file(tmp_path):
    _dataset_files(tmp_path / "data")
    p = write(tmp_path, DATASET_SPEC.replace("data/questions.jsonl", "data/nope.csv"))
    msg = load_error(p)
    assert field_of(msg, p) == "dataset.questions.path"


def test_missing_spec_file(tmp_path):
    p = tmp_path / "absent.yaml"
    msg = load_error(p)
    assert "not found" in msg


# --------------------------------------------------------------------------- errors
def test_malformed_yaml_reports_line(tmp_path):
    p = write(tmp_path, "splitters:\n  - {kind: token}\nretrievers: [\n  - {kind: bm25\n")
    msg = load_error(p)
    assert "malformed YAML" in msg
    assert "line 4" in msg


def test_malformed_yaml_tab_indentation(tmp_path):
    p = write(tmp_path, "splitters:\n\t- kind: token\n")
    msg = load_error(p)
    assert "malformed YAML at line 2" in msg


@pytest.mark.parametrize("text, kind", [("- a\n- b\n", "list"), ("just a string\n", "str"), ("", "NoneType")])
def test_non_mapping_yaml(tmp_path, text, kind):
    p = write(tmp_path, text)
    msg = load_error(p)
    assert "mapping" in msg and kind in msg


def test_unknown_top_level_key(tmp_path):
    p = write(tmp_path, MINIMAL + "colour: red\n")
    msg = load_error(p)
    assert field_of(msg, p) == "colour"
    assert "unknown key" in msg


@pytest.mark.parametrize(
    "text, field",
    [
        ("splitters:\n  - {kind: token, chunk_sise: 5}\nretrievers: [{kind: bm25}]\n", "splitters[0].chunk_sise"),
        (
            "splitters:\n  - {kind: token}\n  - {kind: sentence, overlap: 5}\nretrievers: [{kind: bm25}]\n",
            "splitters[1].overlap",
        ),
        (MINIMAL + "scoring: {bertscore: {num_layer: 3}}\n", "scoring.bertscore.num_layer"),
        (MINIMAL + "dataset: {corpus: {format: demo, path: x.jsonl}}\n", "dataset.corpus.path"),
        (MINIMAL + "embeddings: [{kind: sentence_transformers, batchsize: 8}]\n", "embeddings[0].batchsize"),
    ],
)
def test_unknown_nested_key(tmp_path, text, field):
    p = write(tmp_path, text)
    msg = load_error(p)
    assert field_of(msg, p) == field
    assert "unknown key" in msg


@pytest.mark.parametrize(
    "text, line",
    [
        (  # the typo, not the missing field it leaves behind (it used to be "splitters: Field required")
            MINIMAL.replace("splitters:", "splittr:"),
            "splittr: unknown key `splittr`; did you mean `splitters`? (and 1 more problem)",
        ),
        (MINIMAL + "stage_2: {top_n: 1}\n", "stage_2: unknown key `stage_2`; did you mean `stage2`?"),
        (
            MINIMAL + "scoring: {bertscore: {num_layer: 3}}\n",
            "scoring.bertscore.num_layer: unknown key `num_layer`; did you mean `num_layers`?",
        ),
        (
            MINIMAL.replace("{kind: bm25}", "{kind: bm25, nme: b}"),
            "retrievers[0].nme: unknown key `nme`; did you mean `name`?",
        ),
    ],
)
def test_a_misspelled_key_at_any_depth_is_named_with_the_closest_allowed_one(tmp_path, text, line):
    p = write(tmp_path, text)
    assert load_error(p) == f"{p}: {line}"


def test_unknown_splitter_kind_lists_expected(tmp_path):
    p = write(tmp_path, "splitters:\n  - {kind: token}\n  - {kind: paragraph}\nretrievers: [{kind: bm25}]\n")
    msg = load_error(p)
    assert field_of(msg, p) == "splitters[1]"
    assert "'paragraph'" in msg
    for kind in ("token", "sentence", "recursive", "semantic", "pattern"):
        assert f"'{kind}'" in msg


def test_unknown_retriever_kind(tmp_path):
    p = write(tmp_path, "splitters: [{kind: token}]\nretrievers: [{kind: colbert}]\n")
    msg = load_error(p)
    assert field_of(msg, p) == "retrievers[0]"
    assert "'colbert'" in msg and "'bm25'" in msg and "'fusion'" in msg


def test_missing_kind(tmp_path):
    p = write(tmp_path, "splitters: [{chunk_size: 5}]\nretrievers: [{kind: bm25}]\n")
    msg = load_error(p)
    assert field_of(msg, p) == "splitters[0]"
    assert "kind" in msg


@pytest.mark.parametrize(
    "text, field, words",
    [
        (
            "splitters:\n  - {kind: token, chunk_size: -5}\nretrievers: [{kind: bm25}]\n",
            "splitters[0].chunk_size",
            "greater than 0",
        ),
        (
            "splitters:\n  - {kind: sentence, chunk_overlap: -1}\nretrievers: [{kind: bm25}]\n",
            "splitters[0].chunk_overlap",
            "greater than or equal to 0",
        ),
        (MINIMAL + "top_k: [0]\n", "top_k", "positive"),
        (MINIMAL + "top_k: [5, 3, 5]\n", "top_k", "distinct"),
        (MINIMAL + "top_k: []\n", "top_k", "at least 1"),
        (MINIMAL + "top_k: [five]\n", "top_k[0]", "integer"),
        (MINIMAL + "name: 'my sweep'\n", "name", "letters, digits"),
        (MINIMAL + "scoring: {confidence: 1.5}\n", "scoring.confidence", "less than 1"),
        ("splitters: []\nretrievers: [{kind: bm25}]\n", "splitters", "at least 1"),
        ("splitters: [{kind: token}]\n", "retrievers", "required"),
    ],
)
def test_bad_values_name_the_field(tmp_path, text, field, words):
    p = write(tmp_path, text)
    msg = load_error(p)
    assert field_of(msg, p) == field
    assert words in msg


def test_several_problems_are_counted_on_one_line(tmp_path):
    p = write(
        tmp_path, "splitters:\n  - {kind: token, chunk_size: -5, chunk_overlap: -1}\nretrievers: [{kind: bm25}]\n"
    )
    msg = load_error(p)
    assert "(and 1 more problem)" in msg


def test_invalid_regex_in_pattern_splitter_is_refused(tmp_path):
    p = write(tmp_path, "splitters:\n  - {kind: pattern, pattern: '(unclosed'}\nretrievers: [{kind: bm25}]\n")
    msg = load_error(p)
    assert "not a valid regular expression" in msg
    assert field_of(msg, p).startswith("splitters[0]")
    with pytest.raises(ValueError):
        PatternSplitterSpec(kind="pattern", pattern="[a-")


def test_invalid_regex_error_names_the_pattern_field(tmp_path):
    p = write(tmp_path, "splitters:\n  - {kind: pattern, pattern: '(unclosed'}\nretrievers: [{kind: bm25}]\n")
    msg = load_error(p)
    assert field_of(msg, p) == "splitters[0].pattern"


@pytest.mark.parametrize("weights", ["[-1, 2]", "[0, 0]", "[0.5, -0.1]"])
def test_fusion_weights_must_be_non_negative_with_positive_sum(tmp_path, weights):
    p = write(tmp_path, f"splitters: [{{kind: token}}]\nretrievers: [{{kind: fusion, weights: {weights}}}]\n")
    msg = load_error(p)
    assert field_of(msg, p) == "retrievers[0].weights"
    assert "non-negative" in msg


def test_fusion_weights_valid_and_wrong_arity(tmp_path):
    assert FusionSpec(kind="fusion", weights=(0.0, 1.0)).label() == "fusion-w0-1"
    p = write(tmp_path, "splitters: [{kind: token}]\nretrievers: [{kind: fusion, weights: [1, 2, 3]}]\n")
    msg = load_error(p)
    assert field_of(msg, p) == "retrievers[0].weights"


def test_duplicate_splitter_labels_hint_at_name(tmp_path):
    text = (
        "splitters:\n  - {kind: token, chunk_size: 64}\n  - {kind: token, chunk_size: 64, chunk_overlap: 0}\n"
        "retrievers: [{kind: bm25}]\n"
    )
    p = write(tmp_path, text)
    msg = load_error(p)
    assert "splitters" in msg
    assert "'token64'" in msg
    assert "'name'" in msg
    # giving one a name resolves it
    fixed = text.replace("chunk_overlap: 0}", "chunk_overlap: 0, name: token64-nolap}")
    spec = load_spec(write(tmp_path, fixed, "fixed.yaml"))
    assert [s.label() for s in spec.splitters] == ["token64", "token64-nolap"]


def test_duplicate_retriever_and_embedding_labels(tmp_path):
    p = write(tmp_path, "splitters: [{kind: token}]\nretrievers: [{kind: bm25}, {kind: bm25}]\n")
    assert "retrievers" in load_error(p) and "'bm25'" in load_error(p)
    p2 = write(
        tmp_path,
        MINIMAL + "embeddings: [{kind: sentence_transformers}, {kind: sentence_transformers, batch_size: 8}]\n",
        "e.yaml",
    )
    msg = load_error(p2)
    assert "embeddings" in msg and "'minilm'" in msg


def test_label_with_bad_characters(tmp_path):
    p = write(tmp_path, "splitters: [{kind: token, name: 'my splitter'}]\nretrievers: [{kind: bm25}]\n")
    msg = load_error(p)
    assert "splitters" in msg and "letters, digits" in msg


def test_semantic_splitter_naming_unknown_embedding(tmp_path):
    p = write(tmp_path, "splitters: [{kind: semantic, embedding: bge}]\nretrievers: [{kind: vector}]\n")
    msg = load_error(p)
    assert "splitters" in msg
    assert "'bge'" in msg and "minilm" in msg
    ok = write(tmp_path, "splitters: [{kind: semantic, embedding: minilm}]\nretrievers: [{kind: vector}]\n", "ok.yaml")
    spec = load_spec(ok)
    assert isinstance(spec.splitters[0], SemanticSplitterSpec)


def test_vector_retriever_without_embeddings(tmp_path):
    p = write(tmp_path, "splitters: [{kind: token}]\nembeddings: []\nretrievers: [{kind: vector}]\n")
    msg = load_error(p)
    assert "embeddings" in msg
    # BM25 alone needs no embedding
    spec = load_spec(
        write(tmp_path, "splitters: [{kind: token}]\nembeddings: []\nretrievers: [{kind: bm25}]\n", "bm25.yaml")
    )
    assert [c.config_id for c in expand(spec)] == ["token256-bm25-k5"]


def test_non_utf8_spec(tmp_path):
    p = tmp_path / "latin1.yaml"
    p.write_bytes("name: caf\xe9\nsplitters: [{kind: token}]\nretrievers: [{kind: bm25}]\n".encode("latin-1"))
    msg = load_error(p)
    assert "UTF-8" in msg


def test_vector_store_with_both_path_and_url(tmp_path):
    p = write(tmp_path, MINIMAL + "vector_store: {path: db, url: 'http://localhost:8000'}\n")
    msg = load_error(p)
    assert field_of(msg, p) == "vector_store"
    assert "path" in msg and "url" in msg and "not both" in msg


def test_vector_store_url_form(tmp_path):
    p = write(tmp_path, MINIMAL + "vector_store: {url: 'localhost:8000'}\n")
    msg = load_error(p)
    assert field_of(msg, p) == "vector_store"
    assert "http://host:port" in msg
    ok = load_spec(write(tmp_path, MINIMAL + "vector_store: {url: 'http://localhost:8000'}\n", "ok.yaml"))
    assert ok.vector_store.url == "http://localhost:8000"


def test_vector_store_relative_path_resolves_against_spec(tmp_path, monkeypatch):
    (tmp_path / "s").mkdir()
    p = write(tmp_path / "s", MINIMAL + "vector_store: {path: db}\n")
    monkeypatch.chdir(tmp_path)
    spec = load_spec(p)
    assert spec.vector_store.path == (tmp_path / "s" / "db").resolve()


def test_parse_spec_without_file_uses_source_label():
    with pytest.raises(RagsweepError) as info:
        parse_spec({"splitters": [{"kind": "token"}], "retrievers": [{"kind": "bm25"}], "top_k": [0]}, "manifest.json")
    assert str(info.value).startswith("manifest.json: top_k: ")


@pytest.mark.parametrize("where", ["llm", "embedding"])
def test_a_key_pasted_as_api_key_env_is_refused_without_echoing_it(where):
    key = "sk-proj-PASTED0123456789"
    data = {"splitters": [{"kind": "token"}], "retrievers": [{"kind": "bm25"}]}
    if where == "llm":
        data["llm"] = {"model": "m", "api_key_env": key}
    else:
        data["embeddings"] = [{"kind": "openai", "api_key_env": key}]
    with pytest.raises(RagsweepError) as info:
        parse_spec(data, "s.yaml")
    assert "api_key_env: must be the NAME of an environment variable" in str(info.value)
    assert key not in str(info.value)


@pytest.mark.parametrize(
    "path", sorted((Path(__file__).resolve().parents[1] / "specs").glob("*.yaml")), ids=lambda p: p.name
)
def test_every_shipped_spec_loads_and_expands(path):
    spec = load_spec(path)
    assert expand(spec)
