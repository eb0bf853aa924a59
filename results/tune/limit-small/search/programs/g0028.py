"""Structural program: sent_topmean + bm25 + coverage + rare_idf + consensus by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0015, adds each document's consensus with the dense top-K (column-then-row z-scores); adds TopMeanSim over sentences (raw scores) [genome sent_topmean:none+bm25:row+coverage:none+rare_idf:none+consensus:both|rrf|0].
Hypothesis: Fusing TopMeanSim over sentences, BM25, query-term coverage, rare-term IDF and each document's consensus with the dense top-K by reciprocal rank fusion should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; BM25 rewards exact rare terms (names, numbers) that embeddings blur; documents that cover every query term answer the whole query; the rarest query terms identify the few documents that can answer; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks.
Parent: g0015
Genome: {"channels": {"sent_topmean": "none", "bm25": "row", "coverage": "none", "rare_idf": "none", "consensus": "both"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import centroid
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage, rare_term_idf
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    candidate_mask,
    rrf,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    sentences = chunk_documents(
        ctx.doc_texts, split_sentences, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        sentences_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
    sent_topmean = topmeansim(Q, sentences_vectors, sentences.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        sent_topmean,
        zscore_rows(bm25, mask),
        coverage,
        rare_idf,
        zscore_rows(zscore_cols(consensus, mask), mask),
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
