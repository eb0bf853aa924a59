"""adds Document substructure decomposition (the suggested idea)

Novelty: adds Document substructure decomposition (the suggested idea)
Hypothesis: 
Parent: g0002
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.chunking import chunk_documents, split_paragraphs, split_sentences
from embedding_ttc.programs.primitives.channels import chunk_scores
from embedding_ttc.programs.primitives.channels import prefix_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf

def program(Q, D, S, ctx):
    # Add the idea of Document substructure decomposition as a new channel
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    chunk_scores1 = chunk_scores(Q, ctx, "paragraph", "max", mask)  # (n_q, Q.shape[1] // 4)
    chunk_scores2 = chunk_scores(Q, ctx, "sentence_pair", "topmean", mask)  # (n_q, Q.shape[1] // 4)
    prefix1 = prefix_scores(Q, D, Q.shape[1] // 4)  # (n_q, Q.shape[1] // 4)
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, Q.shape[1] // 2)
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    chunk1 = chunk_documents(ctx.doc_texts, split_paragraphs)  # (n_q, n_docs, n_chunks)
    chunk2 = chunk_documents(ctx.doc_texts, split_sentences)  # (n_q, n_docs, n_chunks)
    chunk1_scores = chunk_scores(chunk1, ctx, "sentence_pair", "topmean", mask)  # (n_q, n_docs, n_chunks)
    chunk2_scores = chunk_scores(chunk2, ctx, "sentence_pair", "topmean", mask)  # (n_q, n_docs, n_chunks)
    chunk1_mean = chunk1_scores.mean(axis=2)  # (n_q, n_docs)
    chunk2_mean = chunk2_scores.mean(axis=2)  # (n_q, n_docs)
    chunk1_max = chunk1_scores.max(axis=2)  # (n_q, n_docs)
    chunk2_max = chunk2_scores.max(axis=2)  # (n_q, n_docs)
    channel = (chunk1_mean + chunk2_mean) / 2  # (n_q, n_docs)
    return rrf([lexical, S, channel], mask=mask)  # float32 (n_q, n_d)
