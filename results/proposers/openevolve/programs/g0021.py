from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf

def program(Q, D, S, ctx):
    # EVOLVE-BLOCK-START
    mask = mask_for(ctx, S)  # None, or (n_q, n_d) bool: each query's candidates
    
    # Query Encoding
    query_embeddings = ctx.encode_fn(ctx.query_texts, view="retrieval.query", dim=None, max_length=None)
    
    # Document Encoding
    doc_embeddings = ctx.encode_fn(ctx.doc_texts, view="retrieval.passage", dim=None, max_length=None)
    
    # Cosine Matrix Calculation
    cosine_matrix = np.dot(query_embeddings, doc_embeddings.T)
    
    # Reciprocal Rank Fusion
    rrf_output = rrf([cosine_matrix, S], mask=mask)  # float32 (n_q, n_d)
    
    return rrf_output
    # EVOLVE-BLOCK-END