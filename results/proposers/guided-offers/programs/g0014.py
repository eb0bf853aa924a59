"""Structural program: sent_maxsim + bm25 + bigram + coverage + rare_idf by reciprocal rank fusion, 1 feedback round.

Novelty: Relative to g0012, replaces the dense cosine S with word-bigram overlap [genome sent_maxsim:row+bm25:row+bigram:row+coverage:row+rare_idf:row|rrf|1|softcentroid].
Hypothesis: The swap of dense cosine S with word-bigram overlap increases nDCG@10 for the aila_statutes task by aligning the dense features with the query normalization. This change aligns the dense features with the word-bigram overlap, which effectively captures the semantic relationships between the words in
Parent: g0012
Genome: {"channels": {"sent_maxsim": "row", "bm25": "row", "bigram": "row", "coverage": "row", "rare_idf": "row"}, "fusion": "rrf", "rounds": 1, "refine": "softcentroid"}
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
from embedding_ttc.programs.primitives.scores import RRF_K, candidate_mask, rrf, zscore_rows

FEEDBACK_K = 5
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5


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
        zscore_rows(sent_maxsim, mask),
        zscore_rows(bm25, mask),
        zscore_rows(bigram, mask),
        zscore_rows(coverage, mask),
        zscore_rows(rare_idf, mask),
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = soft_centroid_query(
        query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, alpha=SOFT_ALPHA, mask=mask
    )
    fused = rrf([fused, query @ D.T], mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
