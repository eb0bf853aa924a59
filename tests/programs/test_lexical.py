"""Tokenizer, BM25 parity with bm25s, and the sparse lexical channels on a hand-worked corpus.

The three-document corpus used throughout, tokenised::

    d0 "The cat sat on the mat."  the cat sat on the mat   (6 tokens)
    d1 "The dog sat."             the dog sat              (3 tokens)
    d2 "A cat and a dog!"         a cat and a dog          (5 tokens)

Document frequencies: the, cat, sat, dog occur in 2 documents; on, mat, a, and in 1. With
N = 3 the BM25 IDF ``log(1 + (N - df + 0.5) / (df + 0.5))`` is
``log(1 + 2.5 / 1.5) = log(8 / 3) = 0.980829...`` for df = 1 and
``log(1 + 1.5 / 2.5) = log(1.6) = 0.470004...`` for df = 2.
"""

from __future__ import annotations

import math
import time
import unicodedata

import bm25s
import numpy as np
import pytest

from embedding_ttc.programs.primitives import tokenizers
from embedding_ttc.programs.primitives.lexical import (
    BM25,
    BM25_B,
    BM25_K1,
    BM25_METHOD,
    RARE_TERM_QUANTILE,
    TermIncidence,
    bigram_overlap,
    bigrams,
    idf,
    query_term_coverage,
    rare_term_idf,
    tokenize,
)
from embedding_ttc.programs.text import incidence as incidence_module
from embedding_ttc.programs.text import term_channels

DOCS = ["The cat sat on the mat.", "The dog sat.", "A cat and a dog!"]
IDF1 = math.log(8 / 3)  # df = 1
IDF2 = math.log(1.6)  # df = 2


# --- tokenize -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello, World! It's 3.14_x", ["hello", "world", "it", "s", "3", "14", "x"]),
        ("Straße ＡＢＣ１２３ Ǆemal", ["strasse", "abc123", "džemal"]),
        ("Привет, мир!", ["привет", "мир"]),
        ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),  # vowel signs and virama stay inside the word
        ("مرحبا بالعالم", ["مرحبا", "بالعالم"]),
        ("ሰላም ዓለም።", ["ሰላም", "ዓለም"]),
        ("한국어 문장", ["한국어", "문장"]),
        # unspaced scripts: overlapping letter bigrams (the default unicode tokenizer)
        ("北京大学", ["北京", "京大", "大学"]),
        ("カーテンを々", ["カー", "ーテ", "テン", "ンを", "を々"]),
        ("ｶﾀｶﾅ", ["カタ", "タカ", "カナ"]),  # half-width katakana, NFKC-normalised
        ("ภาษาไทย", ["ภา", "าษ", "ษา", "าไ", "ไท", "ทย"]),
        ("ที่นี่", ["ที่นี่"]),  # Thai combining marks stay on their letter
        ("BM25 in 北京 and Москва!", ["bm25", "in", "北京", "and", "москва"]),
        ("", []),
        ("... --- !!!", []),
    ],
)
def test_tokenize(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Plain ASCII text, with 42 numbers.",
        "Café “quoted” — naïve résumé",
        "Ünïcödé with combining e\u0301 and Ǆ",
        "Вот как: हिन्दी, العربية, ሰላም",
    ],
)
def test_tokenize_fast_paths_agree_with_the_full_pattern(text: str) -> None:
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    with tokenizers.use_tokenizer("letters"):  # unicode also normalises Arabic letters
        assert tokenize(text) == tokenizers._LETTERS_TOKEN.findall(folded)


def test_bigrams() -> None:
    assert bigrams(["a", "b", "c"]) == ["a b", "b c"]
    assert bigrams(["a"]) == []
    assert bigrams([]) == []


# --- BM25 -----------------------------------------------------------------------------------


def test_bm25_constants() -> None:
    assert (BM25_K1, BM25_B, BM25_METHOD) == (1.5, 0.75, "lucene")


def test_bm25_hand_computed() -> None:
    # avgdl = 14 / 3. "mat": d0 only, tf = 1, dl = 6, IDF1:
    #   tfc = 1 / (1 + 1.5 * (0.25 + 0.75 * 6 / (14 / 3))) = 0.354430...,  score = 0.347636
    # "the": d0 tf = 2, dl = 6 -> IDF2 * 2 / (2 + 1.821429) = 0.245983
    #        d1 tf = 1, dl = 3 -> IDF2 * 1 / (1 + 1.5 * (0.25 + 0.75 * 3 / (14 / 3))) = 0.224002
    scores = BM25.fit(DOCS).scores(["mat", "the", "The mat", "unknown words", ""])
    assert scores.dtype == np.float32
    assert scores.shape == (5, 3)
    np.testing.assert_allclose(scores[0], [0.34763568, 0.0, 0.0], rtol=1e-6)
    np.testing.assert_allclose(scores[1], [0.24598321, 0.22400173, 0.0], rtol=1e-6)
    np.testing.assert_allclose(scores[2], [0.59361889, 0.22400173, 0.0], rtol=1e-6)
    np.testing.assert_array_equal(scores[3:], 0.0)


def test_bm25_parity_with_bm25s() -> None:
    docs = [
        "The quick brown fox jumps over the lazy dog.",
        "A quick movement of the enemy will jeopardize six gunboats.",
        "The five boxing wizards jump quickly over the dog.",
        "北京大学的学生在北京学习。",
        "Le renard brun rapide saute par-dessus le chien paresseux.",
        "Dogs and foxes: a field guide to the quick and the lazy.",
    ]
    queries = ["quick fox dog", "the lazy dog dog", "北京 学生", "renard chien", "wizards"]
    ours = BM25.fit(docs).scores(queries)

    reference = bm25s.BM25(k1=BM25_K1, b=BM25_B, method=BM25_METHOD)
    reference.index([tokenize(d) for d in docs], show_progress=False)
    ranked, ranked_scores = reference.retrieve(
        [tokenize(q) for q in queries], k=len(docs), show_progress=False
    )
    for row in range(len(queries)):
        np.testing.assert_allclose(ours[row, ranked[row]], ranked_scores[row], atol=1e-5)
        # Same order: our scores, read in bm25s's ranking, never increase.
        assert np.all(np.diff(ours[row, ranked[row]]) <= 1e-7)


def test_bm25_degenerate_corpora() -> None:
    assert BM25.fit([]).scores(["a"]).shape == (1, 0)
    np.testing.assert_array_equal(BM25.fit(["", "..."]).scores(["a", ""]), np.zeros((2, 2)))
    assert BM25.fit(DOCS).scores([]).shape == (0, 3)


# --- idf ------------------------------------------------------------------------------------


def test_idf_hand_computed() -> None:
    values = idf(DOCS)
    assert set(values) == {"the", "cat", "sat", "on", "mat", "dog", "a", "and"}
    assert values["mat"] == pytest.approx(IDF1)
    assert values["mat"] == pytest.approx(0.9808292530117262)
    assert values["the"] == pytest.approx(IDF2)
    assert values["the"] == pytest.approx(0.47000362924573563)
    assert idf([]) == {}


def test_idf_matches_bm25_on_a_single_occurrence() -> None:
    # Two equal-length documents: tfc = 1 / (1 + k1) = 0.4, so the score is 0.4 * idf.
    docs = ["alpha beta", "gamma delta"]
    assert BM25.fit(docs).scores(["alpha"])[0, 0] == pytest.approx(0.4 * idf(docs)["alpha"])


# --- the sparse channels ----------------------------------------------------------------------


def test_query_term_coverage_hand_computed() -> None:
    got = query_term_coverage(["the cat sat", "dog mat bird", "cat cat", "", "zebra"], DOCS)
    assert got.dtype == np.float32
    expected = [
        [1.0, 2 / 3, 1 / 3],  # {the, cat, sat}: d0 all, d1 the+sat, d2 cat
        [1 / 3, 1 / 3, 1 / 3],  # {dog, mat, bird}: bird counts in the denominator
        [1.0, 0.0, 1.0],  # repeats count once
        [0.0, 0.0, 0.0],  # no term
        [0.0, 0.0, 0.0],  # no term in the corpus
    ]
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_bigram_overlap_hand_computed() -> None:
    got = bigram_overlap(["the cat sat", "A dog sat.", "cat", "the mat the cat"], DOCS)
    assert got.dtype == np.float32
    expected = [
        [1.0, 0.0, 0.0],  # {the cat, cat sat}: both in d0
        [0.0, 0.5, 0.5],  # {a dog, dog sat}: dog sat in d1, a dog in d2
        [0.0, 0.0, 0.0],  # one token, no bigram
        [2 / 3, 0.0, 0.0],  # {the mat, mat the, the cat}: d0 has the mat, the cat
    ]
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_bigram_overlap_on_chinese_characters() -> None:
    # unicode: tokens are letter bigrams 北京 京大 大学, so the query's token bigrams are the
    # character trigrams 北京大 and 京大学: both in d0; d1 (南京 京大 大学) has 京大学 only.
    got = bigram_overlap(["北京大学"], ["我在北京大学学习", "南京大学"])
    np.testing.assert_allclose(got, [[1.0, 1 / 2]], rtol=1e-6)
    # letters: one token per letter, query bigrams {北京, 京大, 大学}: all in d0; d1 has 2.
    with tokenizers.use_tokenizer("letters"):
        got = bigram_overlap(["北京大学"], ["我在北京大学学习", "南京大学"])
    np.testing.assert_allclose(got, [[1.0, 2 / 3]], rtol=1e-6)


def test_rare_term_idf_hand_computed() -> None:
    assert RARE_TERM_QUANTILE == 0.5
    got = rare_term_idf(["cat on mat dog", "bird mat the", "the cat sat", "zebra", ""], DOCS)
    assert got.dtype == np.float32
    expected = [
        # IDFs cat IDF2, on IDF1, mat IDF1, dog IDF2; median (IDF1 + IDF2) / 2 -> {on, mat}
        [2 * IDF1, 0.0, 0.0],
        # bird is in no document; {mat IDF1, the IDF2}, median between -> {mat}
        [IDF1, 0.0, 0.0],
        # all three at IDF2: every term is at the median
        [3 * IDF2, 2 * IDF2, IDF2],
        [0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0],
    ]
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    np.testing.assert_allclose(got[0], [1.9616585, 0.0, 0.0], rtol=1e-6)


def test_rare_term_idf_quantile_extremes() -> None:
    everything = rare_term_idf(["cat on mat dog"], DOCS, quantile=0.0)
    # d0: cat + on + mat; d1: dog; d2: cat + dog
    np.testing.assert_allclose(everything, [[IDF2 + 2 * IDF1, IDF2, 2 * IDF2]], rtol=1e-6)
    rarest = rare_term_idf(["cat on mat dog"], DOCS, quantile=1.0)
    np.testing.assert_allclose(rarest, [[2 * IDF1, 0.0, 0.0]], rtol=1e-6)  # on, mat tie
    with pytest.raises(ValueError, match="quantile"):
        rare_term_idf(["cat"], DOCS, quantile=1.5)


def test_term_incidence_structure() -> None:
    incidence = TermIncidence.from_terms([["b", "a", "b"], [], ["a", "c"]])
    assert dict(incidence.vocabulary) == {"b": 0, "a": 1, "c": 2}  # first occurrence order
    assert incidence.n_docs == 3
    np.testing.assert_array_equal(incidence.term_doc.toarray(), [[1, 0, 0], [1, 0, 1], [0, 0, 1]])
    np.testing.assert_array_equal(incidence.document_frequency, [1, 2, 1])
    weights = incidence.query_matrix([{"a": 2.0, "zzz": 5.0}, {}])
    np.testing.assert_array_equal(incidence.match(weights), [[2, 0, 2], [0, 0, 0]])


def test_match_equals_the_plain_product_with_dense_and_sparse_terms() -> None:
    rng = np.random.default_rng(3)
    zipf = 1.0 / np.arange(1, 401)
    zipf /= zipf.sum()
    doc_terms = [[f"t{i}" for i in rng.choice(400, size=30, p=zipf)] for _ in range(700)]
    incidence = TermIncidence.from_terms(doc_terms)
    weights = [
        {f"t{i}": float(rng.uniform(0.5, 2.0)) for i in rng.choice(400, size=5, p=zipf)}
        for _ in range(1_100)  # more than one block of queries
    ]
    query_matrix = incidence.query_matrix(weights)
    share = np.diff(query_matrix.tocsc().indptr) * incidence.document_frequency / (1_100 * 700)
    assert (share > incidence_module._DENSE_TERM_SHARE).any()
    assert ((share > 0) & (share <= incidence_module._DENSE_TERM_SHARE)).any()
    scale = rng.uniform(0.1, 1.0, size=1_100)
    expected = (query_matrix @ incidence.term_doc).toarray() * scale[:, None]
    np.testing.assert_allclose(incidence.match(query_matrix, scale), expected, rtol=1e-5)


@pytest.mark.parametrize("values", [[0.3], [0.1, 0.9], [0.2, 0.2, 0.7, 1.5, 3.0]])
@pytest.mark.parametrize("q", [0.0, 0.25, 0.5, 0.9, 1.0])
def test_linear_quantile_matches_numpy(values: list[float], q: float) -> None:
    assert term_channels._linear_quantile(values, q) == pytest.approx(float(np.quantile(values, q)))


def test_channels_on_empty_inputs() -> None:
    for channel in (query_term_coverage, bigram_overlap, rare_term_idf):
        assert channel([], DOCS).shape == (0, 3)
        assert channel(["cat"], []).shape == (1, 0)
        np.testing.assert_array_equal(channel(["cat dog"], ["", "!"]), np.zeros((1, 2)))


def test_inputs_untouched() -> None:
    docs, queries = list(DOCS), ["the cat sat"]
    for channel in (query_term_coverage, bigram_overlap, rare_term_idf):
        channel(queries, docs)
    BM25.fit(docs).scores(queries)
    assert docs == DOCS
    assert queries == ["the cat sat"]


def test_scale_smoke() -> None:
    """5,000 synthetic documents by 2,000 queries: shapes and a few pinned values."""
    rng = np.random.default_rng(0)
    vocab = np.array([f"w{i}" for i in range(20_000)])
    zipf = 1.0 / np.arange(1, vocab.size + 1)
    zipf /= zipf.sum()
    docs = [" ".join(row) for row in vocab[rng.choice(vocab.size, size=(5_000, 60), p=zipf)]]
    queries = [" ".join(row) for row in vocab[rng.choice(vocab.size, size=(2_000, 6), p=zipf)]]
    queries[0] = docs[17]  # every term and bigram of query 0 occurs in document 17
    queries[1] = "unseenword anotherunseen"

    started = time.perf_counter()
    coverage = query_term_coverage(queries, docs)
    overlap = bigram_overlap(queries, docs)
    rare = rare_term_idf(queries, docs)
    bm25 = BM25.fit(docs).scores(queries)
    elapsed = time.perf_counter() - started

    for matrix in (coverage, overlap, rare, bm25):
        assert matrix.shape == (2_000, 5_000)
        assert matrix.dtype == np.float32
        assert np.isfinite(matrix).all()
    assert coverage[0, 17] == 1.0
    assert overlap[0, 17] == 1.0
    assert rare[0, 17] > 0.0
    assert bm25[0].argmax() == 17
    for matrix in (coverage, overlap, rare, bm25):
        assert not matrix[1].any()
    print(f"scale smoke: 4 channels, 2,000 x 5,000, {elapsed:.2f} s")
