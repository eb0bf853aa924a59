"""Structural program: sent_maxsim + pair_maxsim + coverage + rare_idf by a convex combination (weight 0.4 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0021, replaces the dense cosine S with MaxSim over sentences [genome sent_maxsim:col+pair_maxsim:both+coverage:col+rare_idf:row|convex:0.4|0].
Hypothesis: Fusing MaxSim over sentences, MaxSim over sentence pairs, query-term coverage and rare-term IDF by a convex combination (weight 0.4 shared by the channels after the first) should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; the best-matching part of a long document carries the evidence that one pooled vector dilutes; documents that cover every query term answer the whole query; the rarest query terms identify the few documents that can answer.
Parent: g0021
Genome: {"channels": {"sent_maxsim": "col", "pair_maxsim": "both", "coverage": "col", "rare_idf": "row"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.4}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    sentence_pairs,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import query_term_coverage, rare_term_idf
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows

FUSION_SHARE = 0.4


def _sentence_pairs(text):
    """Consecutive sentence pairs of a text."""
    return sentence_pairs(split_sentences(text))


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    sentences = chunk_documents(
        ctx.doc_texts, split_sentences, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        sentences_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
    sent_maxsim = maxsim(Q, sentences_vectors, sentences.owner, n_d, mask=mask)
    pairs = chunk_documents(
        ctx.doc_texts, _sentence_pairs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        pairs_vectors = ctx.encode_fn(pairs.texts, "retrieval.passage")
    pair_maxsim = maxsim(Q, pairs_vectors, pairs.owner, n_d, mask=mask)
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_cols(sent_maxsim, mask),
        zscore_rows(zscore_cols(pair_maxsim, mask), mask),
        zscore_cols(coverage, mask),
        zscore_rows(rare_idf, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
