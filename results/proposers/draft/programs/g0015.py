"""Novelty: uses document substructure decomposition (chunks) to fuse the cosine scores with document substructure embeddings.
Hypothesis: decomposes the document structure into smaller pieces and uses these pieces to improve the cosine scores."""
from embedding_ttc.programs.primitives.chunking import chunk_documents
import numpy as np
from embedding_ttc.programs.primitives.channels import chunk_scores, fuse, bm25_scores, rrf, prefix_scores, prf_scores, query_view_scores, view_scores
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows, zscore_cols, rrf, top_k_indices
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage

W_S = 1.0
W_BM25 = 0.5
W_QTC = 0.5
W_CHUNKS = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)

    # Decompose documents into chunks
    chunks = chunk_documents(ctx.doc_texts, chunk_scores, "paragraph", "max", mask)  # (n_docs, max_chunks_per_doc, d) chunks
    chunks_mean = np.mean(chunks, axis=1)  # (n_docs, d) mean of each chunk

    # Decompose chunks into even smaller pieces
    chunks_pieces = chunk_documents(chunks, chunk_scores, "sentence_pair", "topmean", mask)  # (n_docs, max_chunks_per_doc * max_chunks_per_doc, d) sentence_pairs

    # Mix the best piece and the mean piece
    chunks_pieces_mean = np.mean(chunks_pieces, axis=1)  # (n_docs, d) mean of each sentence_pair

    # Fuse the scores with the document substructure embeddings
    out = fuse([S, chunks_pieces_mean], [W_S, W_CHUNKS], mask=mask, method='rrf')
    return out.astype(np.float32)
