"""Re-encodes the queries (query side) and the documents inside index_time (index side)."""

import numpy as np

PASSAGE = "retrieval.passage"


def program(Q, D, S, ctx):
    q = ctx.encode_fn(list(ctx.query_texts))
    with ctx.index_time():
        d = ctx.encode_fn(list(ctx.doc_texts), view=PASSAGE)
    lengths = np.log1p(ctx.doc_lengths.astype(np.float32))
    return (S + 0.25 * (q @ d.T) + 0.01 * lengths[None, :]).astype(np.float32)
