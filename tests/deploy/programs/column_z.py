"""Test program: the cosine plus its column z-scores over the batch of queries.

Novelty: written for the deploy tests; per-document statistics over the queries, as
BidirZScore takes them.
Hypothesis: none; it exists to be deployed.
"""

from embedding_ttc.programs.primitives.scores import zscore_cols


def program(Q, D, S, ctx):
    return S + zscore_cols(S)
