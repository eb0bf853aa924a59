"""Deriving a recipe: artifacts from a recording, the lexical flag, the batch-kind probes.

Everything here runs in-process on library programs or small functions, so it is fast; the
sandboxed end-to-end path is in ``test_program_file.py``. The library's hand-written recipes
are the reference the derivation is checked against.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from embedding_ttc.deploy.corpus import Document
from embedding_ttc.deploy.derive import (
    LEXICAL_ENTRY_POINTS,
    LEXICAL_MODULE,
    derive_artifacts,
    has_lexical_channels,
)
from embedding_ttc.deploy.errors import DeployError
from embedding_ttc.deploy.probe import TOLERANCE, measure
from embedding_ttc.deploy.provenance import provenance_of
from embedding_ttc.deploy.recording import record_encodes
from embedding_ttc.deploy.store import IndexEmbeddingStore
from embedding_ttc.encoders.base import PASSAGE, QUERY
from embedding_ttc.encoders.encode import encode_texts
from embedding_ttc.program_files.checks.source import check_source
from embedding_ttc.programs.catalog import PROGRAMS, get_program, recipe_for
from embedding_ttc.programs.outcome import CandidateError, Status
from embedding_ttc.programs.primitives import lexical
from embedding_ttc.programs.primitives.chunking import split_sentences
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import zscore_cols

from . import QUERIES
from fakes import HashingEncoder

# Documents whose sentences, sentence pairs, paragraphs and whole texts all differ, so that
# every kind of piece is told apart (in the shared corpus a pair is its whole document).
TEXTS = [
    ("Cats", "The cat sat on the mat. It purred.\n\nLater it slept by the fire. The dog watched."),
    ("", "Dogs bark at the postman. The postman runs away. He drops the letters."),
    (
        "Markets",
        "Stock markets fell sharply. Investors sold.\n\nBonds rose. Gold rose too. Banks waited.",
    ),
    ("", "Interest rates and inflation rose together. The bank acted. Prices kept rising."),
    ("Bread", "A recipe for bread.\n\nKnead the dough for ten minutes. Let it rise. Bake it."),
    ("", "Rain is expected tomorrow. Take an umbrella to work. Wear boots."),
    ("Chess", "The knight moves in an L shape. The bishop moves diagonally.\n\nThe king walks."),
    ("", "Volcanoes erupt when pressure builds. Lava flows downhill. Ash falls far away."),
]
DOCS = [Document(f"d{i}", t, x) for i, (t, x) in enumerate(TEXTS)]
DOC_TEXTS = [d.joined for d in DOCS]
KEY = (PASSAGE, None, None)


def sentences(cap: int | None = None) -> list[str]:
    return [s for t in DOC_TEXTS for s in split_sentences(t)[:cap]]


# --- artifacts ---------------------------------------------------------------------------------


def test_sentences_of_every_document_are_one_artifact():
    (artifact,) = derive_artifacts(DOC_TEXTS, {KEY: sentences()})
    assert (artifact.unit, artifact.key, artifact.max_per_doc) == ("sentence", KEY, 32)
    assert artifact.describe() == "sentence@retrieval.passage"


def test_two_kinds_under_one_key_and_a_view_with_dim_and_budget():
    query_key = (QUERY, 16, 64)
    found = derive_artifacts(DOC_TEXTS, {KEY: [*DOC_TEXTS, *sentences()], query_key: DOC_TEXTS})
    assert [(a.unit, a.key) for a in found] == [
        ("document", KEY),
        ("sentence", KEY),
        ("document", query_key),
    ]
    assert found[2].describe() == "document@retrieval.query[16 dim][64 tok]"


def test_the_pieces_kept_per_document_are_derived():
    long_doc = " ".join(f"Sentence number {i} is here." for i in range(40))
    texts = [*DOC_TEXTS, long_doc]

    def first(cap):
        return [s for t in texts for s in split_sentences(t)[:cap]]

    assert [a.max_per_doc for a in derive_artifacts(texts, {KEY: first(None)})] == [None]
    assert [a.max_per_doc for a in derive_artifacts(texts, {KEY: first(32)})] == [32]
    (sixteen,) = derive_artifacts(texts, {KEY: first(16)})  # chunk_scores' cap
    assert sixteen.max_per_doc == 16
    assert sixteen.describe() == "sentence@retrieval.passage (first 16 a document)"
    # On short documents every cap keeps every sentence: the library's cap names the tie.
    assert [a.max_per_doc for a in derive_artifacts(DOC_TEXTS, {KEY: sentences()})] == [32]
    # A cap no primitive uses is not a kind of piece an index knows.
    with pytest.raises(DeployError, match="no index can store"):
        derive_artifacts(texts, {KEY: first(2)})


@pytest.mark.parametrize(
    ("recorded", "example"),
    [
        (["sleeping cats"], "sleeping cats"),  # a query's text
        (sentences()[:3], "Cats The cat sat on the mat."),  # one document's sentences
        ([t[:20] for t in DOC_TEXTS], "Bread A recipe for b"),  # documents cut short
    ],
)
def test_texts_that_are_not_pieces_of_every_document_are_refused(recorded, example):
    with pytest.raises(DeployError, match="no index can store") as err:
        derive_artifacts(DOC_TEXTS, {KEY: recorded})
    assert repr(example) in str(err.value)
    assert "outside ctx.index_time()" in str(err.value)


@pytest.mark.parametrize("two_views", [False, True])
@pytest.mark.parametrize("name", PROGRAMS.names())
def test_derived_artifacts_are_the_library_recipes(name, two_views):
    """The reference: what a library program declares is what the derivation finds."""
    encoder = HashingEncoder(two_views=two_views)
    D = encode_texts(encoder, DOC_TEXTS, PASSAGE)
    rec = record_encodes(
        get_program(name), encoder, DOC_TEXTS, D, QUERIES, IndexEmbeddingStore(), None
    )
    recorded = {key: texts for key, (texts, _) in rec.recorded.groups().items()}
    found = {(a.unit, a.key, a.max_per_doc) for a in derive_artifacts(DOC_TEXTS, recorded)}
    declared = recipe_for(name).active_artifacts(encoder.info.collapsed)
    assert found == {(a.unit, a.key, a.max_per_doc) for a in declared}


# --- the lexical flag --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "lexical"),
    [
        ("from embedding_ttc.programs.primitives.lexical import BM25\n", True),
        ("from embedding_ttc.programs.primitives import lexical\n", True),
        ("import embedding_ttc.programs.primitives.lexical as lx\n", True),
        ("from embedding_ttc.programs.primitives.channels import bm25_scores\n", True),
        (
            "from embedding_ttc.programs.primitives import channels as ch\nX = ch.bm25_scores\n",
            True,
        ),
        ("from embedding_ttc.programs.primitives.channels import chunk_scores\n", False),
        ("import numpy as np\n", False),
    ],
)
def test_lexical_channels_are_read_from_the_source(source, lexical):
    parsed = check_source(source + "\n\ndef program(Q, D, S, ctx):\n    return S.copy()\n")
    assert has_lexical_channels(parsed) is lexical


def test_every_primitive_calling_the_lexical_module_is_an_entry_point():
    """A new primitive built on the lexical module must be listed, or it is missed."""
    from embedding_ttc.programs.primitives import (
        anchors,
        channels,
        chunking,
        feedback,
        late,
        scores,
    )

    exported = set(lexical.__all__)
    calling = set()
    for module in (anchors, channels, chunking, feedback, late, scores):
        for name, obj in vars(module).items():
            if inspect.isfunction(obj) and obj.__module__ == module.__name__:
                words = set(inspect.getsource(obj).replace("(", " ").replace(".", " ").split())
                if words & exported:
                    calling.add(f"{module.__name__}.{name}")
    assert calling <= LEXICAL_ENTRY_POINTS
    assert all(not e.startswith(LEXICAL_MODULE) for e in LEXICAL_ENTRY_POINTS)


# --- the batch-kind probes ---------------------------------------------------------------------


class Fn:
    """A program from a function (in-process, for the probes)."""

    def __init__(self, name, fn):
        self.name = name
        self.fn = fn

    def __call__(self, Q, D, S, ctx):
        return self.fn(Q, D, S, ctx)


def probe(program, queries=QUERIES, lexical=False, store=None):
    encoder = HashingEncoder()
    D = encode_texts(encoder, DOC_TEXTS, PASSAGE)
    ids = [d.id for d in DOCS]
    return measure(
        program,
        encoder,
        store or IndexEmbeddingStore(),
        DOC_TEXTS,
        ids,
        D,
        queries,
        lexical=lexical,
    )


def bm25_sum(Q, D, S, ctx):
    return S + 0.05 * BM25.fit(ctx.doc_texts).scores(ctx.query_texts)


@pytest.mark.parametrize(
    ("fn", "kind", "own_moved", "shared_moved"),
    [
        (lambda Q, D, S, ctx: S * 2, "candidates", False, False),  # never claimed independent
        (bm25_sum, "candidates", True, False),
        (lambda Q, D, S, ctx: S + zscore_cols(S), "reference", True, True),
    ],
)
def test_the_probes_tell_the_three_kinds_apart(fn, kind, own_moved, shared_moved):
    measured = probe(Fn("f", fn))
    batch = measured.batch
    assert batch.answer == kind
    assert (batch.own_lists_moved > TOLERANCE) is own_moved
    assert (batch.shared_list_moved > TOLERANCE) is shared_moved
    assert (batch.sample_queries, batch.candidates_per_query) == (len(QUERIES), len(DOCS) // 2)


def test_unmeasurable_dependence_takes_the_safe_answer():
    independent = Fn("f", lambda Q, D, S, ctx: S * 2)
    alone = probe(independent, queries=QUERIES[:1])
    assert alone.batch.answer == "reference"
    assert alone.batch.own_lists_moved is None
    assert "fewer than two sample queries" in alone.batch.why
    # Lexical channels: at least candidates, whatever the probes saw.
    lexical = probe(independent, lexical=True)
    assert lexical.batch.answer == "candidates"
    assert "lexical channels" in lexical.batch.why


def test_query_time_encodes_are_counted_per_query():
    def expand(Q, D, S, ctx):
        texts = [f"{q} {w}" for q in ctx.query_texts for w in ("one", "two", "three")]
        E = ctx.encode_fn(texts, QUERY).reshape(len(ctx.query_texts), 3, -1).mean(axis=1)
        return S + E @ D.T

    measured = probe(Fn("expand", expand))
    assert (measured.query_encodes, measured.fewest_query_encodes) == (3, 3)


def test_an_index_time_encode_the_store_lacks_is_refused():
    def reads_queries_at_index_time(Q, D, S, ctx):
        with ctx.index_time():
            ctx.encode_fn(list(ctx.query_texts), QUERY)
        return S.copy()

    with pytest.raises(DeployError, match="depend on the queries or the candidates"):
        probe(Fn("f", reads_queries_at_index_time))


def test_a_failure_in_a_probe_is_named():
    def fails_on_batches(Q, D, S, ctx):  # as a sandboxed program reports a crash
        if len(ctx.query_texts) > 1:
            raise CandidateError(Status.CRASHED, "IndexError: index 5 is out of bounds")
        return S.copy()

    message = r"program boom failed while its batch dependence was measured \(crashed\)"
    with pytest.raises(DeployError, match=message):
        probe(Fn("boom", fails_on_batches))


# --- provenance --------------------------------------------------------------------------------


def test_provenance_from_a_search_run_and_from_the_header(tmp_path):
    run = tmp_path / "run"
    (run / "programs").mkdir(parents=True)
    source = '"""Structural program.\n\nNovelty: a new fusion.\nParent: g0003\n"""\n'
    path = run / "programs" / "g0007.py"
    path.write_text(source)
    line = {
        "schema_version": 3,
        "generation": 7,
        "program_id": "g0007",
        "parent_id": "g0003",
        "status": "rejected",
        "reason": "novelty: too close",
        "proposer": "structural",
        "hypothesis": "it helps",
    }
    (run / "ledger.jsonl").write_text(json.dumps(line) + "\n")
    found = provenance_of(path, source)
    assert (found.search_run, found.generation, found.proposer) == (str(run), 7, "structural")
    assert (found.parent_id, found.novelty, found.hypothesis) == (
        "g0003",
        "a new fusion.",
        "it helps",
    )
    # The same file outside its run keeps its header's claims only.
    alone = provenance_of(tmp_path / "g0007.py", source)
    assert (alone.search_run, alone.generation, alone.parent_id) == (None, None, "g0003")
    # A ledger that cannot be read leaves the run's fields empty; the build goes on.
    (run / "ledger.jsonl").write_text("not json\n")
    assert provenance_of(path, source).generation is None


def test_a_committed_search_program_has_its_run_and_generation():
    path = Path(__file__).resolve().parents[2] / "results" / "search" / "programs" / "g0013.py"
    found = provenance_of(path, path.read_text())
    assert found.generation == 13
    assert found.parent_id == "g0007"
    assert found.novelty.startswith("Relative to g0007")
