"""
Novelty: uses chunk_scores to score each document by its best sentence, and then fuses the scores with the cosine scores and a second granularity of chunk_scores over paragraphs.
Hypothesis: The best sentence shares the vocabulary the query lacks, and the best document is more similar to the best sentence than to the whole document.

Import exactly as shown; nothing else exists.

from embedding_ttc.programs.primitives.channels import fuse, bm25_scores, chunk_scores, prefix_scores, prf_scores, query_view_scores, view_scores
    bm25_scores(ctx) -> (n_q, n_d) — Okapi BM25 of every document for every query (no encoder call).
    chunk_scores(Q, ctx, unit='sentence', reduce='max', mask=None) -> (n_q, n_d) — Documents scored by pieces (unit sentence|sentence…
    fuse(channels, weights=None, mask=None, method='zscore') -> (n_q, n_d) — Fuse channels: weighted sum of row z-scores (method zsco…
    prefix_scores(Q, D, dims) -> (n_q, n_d) — Cosine over the first `dims` dimensions, each row renormalised (Matryoshka prefix).
    prf_scores(Q, D, S, k=3, alpha=0.5, mask=None) -> (n_q, n_d) — Feedback: each query moved toward its top `k` documents (SoftCentr…
    query_view_scores(D, ctx, view='text-matching') -> (n_q, n_d) — The queries re-encoded under `view` (query-time encodes) against…
    view_scores(Q, ctx, view='text-matching') -> (n_q, n_d) — Queries against the documents re-encoded under `view` (an index-time en…
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows, zscore_cols, rrf, top_k_indices
    candidate_mask(n_q, n_d, candidates) -> None or (n_q, n_d) bool — Build the `(n_q, n_d)` candidate mask from `Context.candidates`.
    zscore_rows(S, mask=None) -> (n_q, n_d) — Standardise each row over its candidates: `(s - mean) / std` (population std).
    zscore_cols(S, mask=None) -> (n_q, n_d) — Standardise each column over the queries that have it as a candidate.
    rrf(channels, mask=None, k=60, ties='average') -> (n_q, n_d) — Reciprocal rank fusion: `RRF(d) = sum_i 1 / (k + rank_i(d))`.
    top_k_indices(S, k, mask=None) -> list of n_q int arrays — Per row, the `k` best candidate column indices, best first.
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
    soft_centroid_query(Q, D, S, *, k=3, tau=0.05, alpha=0.5, mask=None) -> (n_q, d) — *SoftCentroid*'s query: `q' = normalize((1 - a…
from embedding_ttc.programs.primitives.late import maxsim
    maxsim(Q, C, owner, n_docs, *, mask=None, block_elements=16777216) -> (n_q, n_d) — Chunk-level MaxSim: each document's best cosin…
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents, split_sentences
    Chunks(texts, owner, n_docs) — Pieces of a corpus with the document each belongs to.
      .starts — Index of each document's first chunk (length `n_docs`), for `reduceat`.
    chunk_documents(doc_texts, splitter, *, max_chunks_per_doc=None) -> Chunks with .texts (list of str), .owner (int array), .n_docs…
    split_sentences(text) -> list of str — Split a text into sentences with script-aware, rule-based boundaries.
from embedding_ttc.programs.primitives.lexical import BM25
    BM25 — Okapi BM25 over our tokens, a thin wrapper around `bm25s` (Robertson et al. 1995).
      .fit(doc_texts) -> an index: BM25.fit(ctx.doc_texts).scores(ctx.query_texts) — Index a corpus.
      .scores(query_texts) -> (n_q, n_d) — BM25 score of every document for every query.
      .top_k(query_texts, k, tiebreak) — The best `k` documents of each query, through `bm25s`'s own top-k retrieval.
"""

import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, bm25_scores, chunk_scores, prefix_scores
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents, split_sentences
from embedding_ttc.programs.primitives.scores import top_k_indices
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.late import maxsim

W_S = 1.0
W_BM25 = 0.5
W_QTC = 0.5
W_PARAGRAPH = 0.5
W_SENTENCE_PAIR = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)

    # Score documents by their best sentence
    M = chunk_scores(Q, ctx, "sentence", "max", mask)

    # Score documents by their best paragraph
    A = chunk_scores(Q, ctx, "paragraph", "topmean", mask)

    # Fuse M with S and with a second granularity
    channels = [S, M, A]
    weights = [W_S, W_PARAGRAPH, W_SENTENCE_PAIR]
    return fuse(channels, weights, mask=mask, method='rrf')
