from embedding_ttc.programs.primitives.channels import bm25_scores, chunk_scores, fuse, prefix_scores, prf_scores, query_view_scores, view_scores
    bm25_scores(ctx) -> (n_q, n_d) — Okapi BM25 of every document for every query (no encoder call).
    chunk_scores(Q, ctx, unit='sentence', reduce='max', mask=None) -> (n_q, n_d) — Documents scored by pieces (unit sentence|sentence…
    fuse(channels, weights=None, mask=None, method='zscore') -> (n_q, n_d) — Fuse channels: weighted sum of row z-scores (method zsco…
    prefix_scores(Q, D, dims) -> (n_q, n_d) — Cosine over the first `dims` dimensions, each row renormalised (Matryoshka prefix).
    prf_scores(Q, D, S, k=3, alpha=0.5, mask=None) -> (n_q, n_d) — Feedback: each query moved toward its top `k` documents (SoftCentr…
    query_view_scores(D, ctx, view='text-matching') -> (n_q, n_d) — The queries re-encoded under `view` (query-time encodes) against…
    view_scores(Q, ctx, view='text-matching') -> (n_q, n_d) — Queries against the documents re-encoded under `view` (an index-time en…
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows, zscore_cols
    candidate_mask(n_q, n_d, candidates) -> None or (n_q, n_d) bool — Build the `(n_q, n_d)` candidate mask from `Context.candidates`.
    zscore_rows(S, mask=None) -> (n_q, n_d) — Standardise each row over its candidates: `(s - mean) / std` (population std).
    zscore_cols(S, mask=None) -> (n_q, n_d) — Standardise each column over the queries that have it as a candidate.

def program(Q, D, S, ctx):
    """Return a new |Q|x|D| float32 matrix of scores (higher is better).

    Q: (|Q|, d) float32, L2-normalised query embeddings (view "retrieval.query").
    D: (|D|, d) float32, L2-normalised document embeddings (view "retrieval.passage").
    S: (|Q|, |D|) float32, the cosine matrix Q @ D.T (do not modify it in place).
    ctx.encode_fn(texts, view="retrieval.query", dim=None, max_length=None) -> (n, d) float32
        unit rows; views: "retrieval.query", "retrieval.passage", "text-matching",
        "classification"; every text encoded costs one unit.
    ctx.index_time(): context manager; encodes of document-side text inside it are
        amortisable index-time work.
    ctx.query_texts, ctx.doc_texts: raw texts aligned with the rows / columns of S.
    ctx.query_ids, ctx.doc_ids: identifiers.
    ctx.candidates: None, or per query an int array of the column indices it ranks
        (feedback must only look at these).
    ctx.views_collapsed: True when all views are the same encoding.
    ctx.doc_lengths: int64 word count per document.
    """
    
    # EVOLVE-BLOCK-START
    mask = candidate_mask(ctx.qid, S.shape[1])  # None, or (n_q, n_d) bool: each query's candidates
    
    # Query Encoding
    query_embeddings = ctx.encode_fn(ctx.query_texts, view="retrieval.query", dim=None, max_length=None)
    
    # Document Encoding
    doc_embeddings = ctx.encode_fn(ctx.doc_texts, view="retrieval.passage", dim=None, max_length=None)
    
    # Cosine Matrix Calculation
    cosine_matrix = np.dot(query_embeddings, doc_embeddings.T)
    
    # Reciprocal Rank Fusion
    rrf_output = fuse([cosine_matrix, S], mask)  # float32 (n_q, n_d)
    
    return rrf_output
    # EVOLVE-BLOCK-END