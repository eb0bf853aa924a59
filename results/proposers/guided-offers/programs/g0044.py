"""Structural program: sent_maxsim + bm25 + bigram + coverage + rare_idf by a convex combination (weight 0.5 shared by the channels after the first), 1 feedback round.

Novelty: Relative to g0041, replaces the distance from the candidates' centroid (a hubness correction) with MaxSim over sentences [genome sent_maxsim:both+bm25:row+bigram:row+coverage:minmax+rare_idf:row|convex:0.5|1|softcentroid].
Hypothesis: The swap of the distance from the candidates' centroid (a hubness correction) with MaxSim over sentences increases nDCG@10 for the aila_statutes task by aligning the dense features with the query normalization. This change aligns the dense features with the best matching part of a long document, as
Parent: g0041
Genome: {"channels": {"sent_maxsim": "both", "bm25": "row", "bigram": "row", "coverage": "minmax", "rare_idf": "row"}, "fusion": "convex", "rounds": 1, "refine": "softcentroid", "share": 0.5}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import (
    BM25,
    bigram_overlap,
    query_term_coverage,
    rare_term_idf,
)
from embedding_ttc.programs.primitives.scores import (
    ZSCORE_EPS,
    candidate_mask,
    zscore_cols,
    zscore_rows,
)

FEEDBACK_K = 5
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5
FUSION_SHARE = 0.5


def _minmax_rows(scores, mask):
    """Min-max over each query's candidates: its best candidate 1, its worst 0.

    A query whose candidates span at most ZSCORE_EPS (one candidate, a constant row) is all 0,
    as the z-scores treat a row without spread; non-candidates are 0.
    """
    cand = np.ones(np.shape(scores), dtype=bool) if mask is None else mask
    x = np.where(cand, scores, 0.0).astype(np.float64)
    low = x.min(axis=1, keepdims=True, where=cand, initial=np.inf)
    high = x.max(axis=1, keepdims=True, where=cand, initial=-np.inf)
    span = high - low
    spread = span > ZSCORE_EPS
    scaled = np.where(spread, (x - low) / np.where(spread, span, 1.0), 0.0)
    return np.where(cand, scaled, 0.0).astype(np.float32)


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    sentences = chunk_documents(
        ctx.doc_texts, split_sentences, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        sentences_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
    sent_maxsim = maxsim(Q, sentences_vectors, sentences.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(zscore_cols(sent_maxsim, mask), mask),
        zscore_rows(bm25, mask),
        zscore_rows(bigram, mask),
        _minmax_rows(coverage, mask),
        zscore_rows(rare_idf, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = soft_centroid_query(
        query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, alpha=SOFT_ALPHA, mask=mask
    )
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
