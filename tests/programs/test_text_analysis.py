"""Text analyses: one text's analysis pinned by hand, rows, concatenation, disk, chunks, memo."""

from __future__ import annotations

import json

import numpy as np
import pytest

from embedding_ttc.programs.base import Context, DeployedInputs
from embedding_ttc.programs.primitives.channels import SPLITTERS
from embedding_ttc.programs.primitives.chunking import MAX_CHUNKS_PER_DOC, chunk_documents
from embedding_ttc.programs.primitives.lexical_analysed import bigram_overlap_analysed
from embedding_ttc.programs.primitives.text_analysis import (
    GRANULARITIES,
    ColumnAnalyses,
    TextAnalyses,
    TextAnalyzer,
    Vocabulary,
    analyses_of,
    analyze,
    analyze_text,
    pack_bigrams,
    take_rows,
    unpack_bigrams,
)

TEXTS = [
    "The cat sat. The cat ran!\n\nA dog barked at the cat.",
    "",
    "   ",
    "One sentence without an end",
    "猫が好きです。犬も好き！",
    " ".join(f"Sentence number {i} ends here." for i in range(40)),
    "Revenue\n\n 5,363 \n\nCosts rose. Profits fell.\n\nDr. Smith said so. Fine.",
]


def tokens_of(analyses: TextAnalyses, i: int) -> list[tuple[str, int]]:
    terms = analyses.row(i).terms
    return [(analyses.vocabulary.token(int(t)), int(c)) for t, c in terms]


def bigrams_of(analyses: TextAnalyses, i: int) -> list[str]:
    first, second = unpack_bigrams(analyses.row(i).bigrams)
    v = analyses.vocabulary
    return [f"{v.token(int(a))} {v.token(int(b))}" for a, b in zip(first, second, strict=True)]


def test_one_text_is_analysed_as_written_out_by_hand():
    vocabulary = Vocabulary()
    doc = analyze_text("The cat sat. The cat ran!\n\nA dog.", vocabulary)
    assert vocabulary.tokens == ["the", "cat", "sat", "ran", "a", "dog"]
    # Distinct tokens in order of first occurrence, with their counts.
    assert doc.terms.tolist() == [[0, 2], [1, 2], [2, 1], [3, 1], [4, 1], [5, 1]]
    # Distinct bigrams in order of first occurrence ("the cat" twice, kept once).
    assert (
        doc.bigrams.tolist()
        == pack_bigrams(np.array([0, 1, 2, 1, 3, 4]), np.array([1, 2, 0, 3, 4, 5])).tolist()
    )
    assert doc.sentences.tolist() == [[0, 12], [13, 25], [27, 33]]
    assert doc.paragraphs.tolist() == [[0, 25], [27, 33]]


def test_a_vocabulary_extension_keeps_the_base_ids():
    base = Vocabulary(["a", "b"])
    extended = Vocabulary(base=base)
    assert extended.add(["b", "c", "a", "c"]).tolist() == [1, 2, 0, 2]
    assert extended.tokens == ["a", "b", "c"] and len(base) == 2
    base.add(["z"])  # a token the base gains later is not the extension's
    assert extended.lookup(["z", "c", "q"]).tolist() == [-1, 2, -1]
    with pytest.raises(ValueError, match="once"):
        Vocabulary(["a", "a"])


def test_take_and_concatenate_agree_with_analysing_the_texts_together():
    whole = analyze(TEXTS)
    assert whole.n_docs == len(TEXTS)
    assert whole.lengths.tolist() == [sum(c for _, c in tokens_of(whole, i)) for i in range(7)]
    rows = np.array([5, 0, 4, 0])
    taken = whole.take(rows)
    assert [tokens_of(taken, i) for i in range(4)] == [tokens_of(whole, int(r)) for r in rows]
    assert [bigrams_of(taken, i) for i in range(4)] == [bigrams_of(whole, int(r)) for r in rows]
    # Parts analysed with their own vocabularies: ids are mapped into one.
    joined = TextAnalyses.concatenate([analyze(TEXTS[:3]), analyze(TEXTS[3:]), analyze(TEXTS[:1])])
    assert joined.n_docs == 8
    for i, j in enumerate([*range(7), 0]):
        assert tokens_of(joined, i) == tokens_of(whole, j)
        assert bigrams_of(joined, i) == bigrams_of(whole, j)
        for part in ("sentences", "paragraphs"):
            assert getattr(joined.row(i), part).tolist() == getattr(whole.row(j), part).tolist()
    queries = ["the cat sat", "dog barked at", "犬も好き"]
    np.testing.assert_array_equal(
        bigram_overlap_analysed(queries, joined),
        bigram_overlap_analysed(queries, whole.take(np.array([*range(7), 0]))),
    )


@pytest.mark.parametrize("mmap", [True, False])
def test_saved_analyses_load_back(tmp_path, mmap):
    whole = analyze(TEXTS)
    whole.save(tmp_path / "a")
    back = TextAnalyses.load(tmp_path / "a", mmap=mmap)
    assert back.vocabulary.tokens == whole.vocabulary.tokens
    for part in ("terms", "bigrams", "sentences", "paragraphs"):
        np.testing.assert_array_equal(getattr(back, part).indptr, getattr(whole, part).indptr)
        np.testing.assert_array_equal(getattr(back, part).values, getattr(whole, part).values)
    assert isinstance(back.terms.values, np.memmap) == mmap


def test_an_empty_corpus_saves_and_loads(tmp_path):
    analyze([]).save(tmp_path / "a")
    assert TextAnalyses.load(tmp_path / "a").n_docs == 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: {**m, "schema_version": 99}, "schema version 99"),
        (lambda m: {**m, "extra": 1}, "unexpected fields"),
        (lambda m: {**m, "documents": 3}, "do not fit together"),
        (lambda m: {**m, "vocabulary": 1}, "tokens, not 1"),
    ],
)
def test_a_damaged_record_is_named(tmp_path, change, message):
    analyze(TEXTS).save(tmp_path)
    meta = json.loads((tmp_path / "meta.json").read_text())
    (tmp_path / "meta.json").write_text(json.dumps(change(meta)))
    with pytest.raises(ValueError, match=message):
        TextAnalyses.load(tmp_path)


def test_granularities_are_the_splitters():
    assert tuple(SPLITTERS) == GRANULARITIES


@pytest.mark.parametrize("granularity", GRANULARITIES)
@pytest.mark.parametrize("cap", [MAX_CHUNKS_PER_DOC, 1, None])
def test_chunks_from_the_spans_are_those_of_the_splitters(granularity, cap):
    want = chunk_documents(TEXTS, SPLITTERS[granularity], max_chunks_per_doc=cap)
    got = analyze(TEXTS).chunks(TEXTS, granularity, cap)
    assert got.texts == want.texts
    np.testing.assert_array_equal(got.owner, want.owner)
    with pytest.raises(ValueError, match="unknown granularity"):
        analyze(TEXTS).chunks(TEXTS, "word", cap)


def test_the_analyzer_analyses_each_text_once_and_starts_afresh_when_full(monkeypatch):
    calls: list[str] = []
    import embedding_ttc.programs.text.analysis_sources as module

    real = module.analyze_text
    monkeypatch.setattr(module, "analyze_text", lambda t, v: calls.append(t) or real(t, v))
    analyzer = TextAnalyzer(max_texts=4)
    first = analyzer.analyses(TEXTS[:3])
    again = analyzer.analyses(TEXTS[2::-1])
    assert calls == TEXTS[:3]
    assert [tokens_of(again, i) for i in range(3)] == [tokens_of(first, i) for i in (2, 1, 0)]
    analyzer.analyses(TEXTS[3:5])  # five remembered: the next call starts afresh
    analyzer.analyses(TEXTS[:1])
    assert calls == [*TEXTS[:5], TEXTS[0]]
    assert tokens_of(first, 0)[0] == ("the", 3)  # earlier analyses keep their vocabulary


def test_a_context_s_analyses_are_used_and_checked():
    stored = analyze(TEXTS)
    ctx = Context(
        encode_fn=lambda *a, **k: None,  # type: ignore[arg-type, return-value]
        query_texts=("q",),
        doc_texts=(TEXTS[4], TEXTS[0]),
        query_ids=("q",),
        doc_ids=("a", "b"),
        deployed=DeployedInputs(text_analyses=ColumnAnalyses(stored, np.array([4, 0]))),
    )
    got = analyses_of(ctx)
    assert analyses_of(ctx) is got  # computed once per call
    assert tokens_of(got, 1) == tokens_of(stored, 0)
    without = analyses_of(Context(**{**ctx.__dict__, "deployed": None}))
    assert tokens_of(without, 0) == tokens_of(stored, 4)
    short_analyses = DeployedInputs(text_analyses=ColumnAnalyses(stored, np.array([4])))
    short = Context(**{**ctx.__dict__, "deployed": short_analyses})
    with pytest.raises(ValueError, match="hold 1 documents, not its 2"):
        analyses_of(short)


def test_column_analyses_append_live_texts_in_an_extended_vocabulary():
    stored = analyze(TEXTS[:2])
    live = ["Zebras graze. The cat watches.", TEXTS[0]]
    got = ColumnAnalyses(stored, np.array([1, 0]), live).analyses()
    assert got.n_docs == 4
    assert got.vocabulary.tokens[: len(stored.vocabulary)] == stored.vocabulary.tokens
    whole = analyze([TEXTS[1], TEXTS[0], *live])
    for i in range(4):
        assert tokens_of(got, i) == tokens_of(whole, i)
        assert bigrams_of(got, i) == bigrams_of(whole, i)
    assert len(stored.vocabulary) == len(analyze(TEXTS[:2]).vocabulary)  # not extended


@pytest.mark.parametrize(
    ("dtype", "shape"),
    [(np.int32, (50, 2)), (np.int64, (50,)), (np.float32, (50, 384)), (np.int16, (50, 3))],
)
def test_take_rows_is_fancy_indexing(tmp_path, dtype, shape):
    rng = np.random.default_rng(0)
    values = rng.integers(-(2**15), 2**15, size=shape).astype(dtype)
    np.save(tmp_path / "v.npy", values)
    mapped = np.load(tmp_path / "v.npy", mmap_mode="r")
    positions = np.array([7, 7, 0, 49, 3], dtype=np.int64)
    for source in (values, mapped, values[::-1], values[:, :1] if values.ndim == 2 else values):
        got = take_rows(source, positions)
        assert type(got) is np.ndarray and got.dtype == source.dtype
        np.testing.assert_array_equal(got, np.asarray(source)[positions])
    empty = take_rows(values, np.empty(0, dtype=np.int64))
    assert empty.shape == (0, *shape[1:]) and empty.dtype == values.dtype
