"""Structural program: dense + sent_topmean + bigram by a sum of row z-scores, 0 feedback rounds.

Novelty: Relative to g0013, adds word-bigram overlap (z-scores over the dense top-K) [genome dense:row+sent_topmean:row+bigram:local|zsum|0].
Hypothesis: This edit adds word-bigram overlap, which ranks by topic and resists fine-grained noise, potentially improving nDCG@10 on tasks such as aila_statutes, legal_summarization, and lemb_needle.
Parent: g0013
Genome: {"channels": {"dense": "row", "sent_topmean": "row", "bigram": "local"}, "fusion": "zsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import bigram_overlap
from embedding_ttc.programs.primitives.scores import (
    ZSCORE_EPS,
    candidate_mask,
    top_k_indices,
    zscore_rows,
)

LOCAL_K = 20


def _local_zscore(scores, dense, mask):
    """Z-scores by the mean and deviation of each query's top LOCAL_K candidates under dense.

    Candidates outside that head are clipped to the head's range of z-scores (the range holds
    0, the head's mean); a head without spread gives 0; non-candidates are 0.
    """
    cand = np.ones(np.shape(scores), dtype=bool) if mask is None else mask
    x = np.where(cand, scores, 0.0).astype(np.float64)
    head = np.zeros(x.shape, dtype=bool)
    for row, top in enumerate(top_k_indices(dense, LOCAL_K, mask)):
        head[row, top] = True
    size = np.maximum(head.sum(axis=1, keepdims=True), 1)
    mean = np.where(head, x, 0.0).sum(axis=1, keepdims=True) / size
    dev = np.where(head, x - mean, 0.0)
    std = np.sqrt((dev * dev).sum(axis=1, keepdims=True) / size)
    spread = std > ZSCORE_EPS
    z = np.where(spread, (x - mean) / np.where(spread, std, 1.0), 0.0)
    low = z.min(axis=1, keepdims=True, where=head, initial=0.0)
    high = z.max(axis=1, keepdims=True, where=head, initial=0.0)
    z = np.where(head, z, np.clip(z, low, high))
    return np.where(cand, z, 0.0).astype(np.float32)


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
    channels = [
        zscore_rows(S, mask),
        zscore_rows(sent_topmean, mask),
        _local_zscore(bigram, S, mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
