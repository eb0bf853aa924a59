"""Structural program: dense + sent_topmean + bigram + consensus by reciprocal rank fusion, 1 feedback round.

Novelty: Relative to g0089, drops BM25; fuses by reciprocal rank fusion instead of a convex combination (weight 0.9 shared by the channels after the first); changes MaxSim over paragraphs to TopMeanSim over sentences; adds feedback round 1 (vprf refinement of the fused top-K) [genome dense:row+sent_topmean:col+bigram:col+consensus:none|rrf|1|vprf].
Hypothesis: Fusing the dense cosine S, TopMeanSim over sentences, word-bigram overlap and each document's consensus with the dense top-K by reciprocal rank fusion should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; phrases matched in order are stronger evidence than single words; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks; 1 vprf feedback round then pull each query toward its fused top-K.
Parent: g0089
Genome: {"channels": {"dense": "row", "sent_topmean": "col", "bigram": "col", "consensus": "none"}, "fusion": "rrf", "rounds": 1, "refine": "vprf"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import centroid, vprf_update
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import bigram_overlap
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    candidate_mask,
    rrf,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10
FEEDBACK_K = 5
VPRF_BETA = 0.3


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    sentences = chunk_documents(
        ctx.doc_texts, split_sentences, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        sentences_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
    sent_topmean = topmeansim(Q, sentences_vectors, sentences.owner, n_d, mask=mask)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_cols(sent_topmean, mask),
        zscore_cols(bigram, mask),
        consensus,
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = vprf_update(query, D, top_k_indices(fused, FEEDBACK_K, mask), VPRF_BETA)
    fused = rrf([fused, query @ D.T], mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
