"""adds Document substructure decomposition (the suggested idea)

Novelty: adds Document substructure decomposition (the suggested idea)
Hypothesis: 
Parent: g0002
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.channels import chunk_scores, fuse
from embedding_ttc.programs.primitives.channels import prefix_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents, sentence_pairs, split_paragraphs, split_sentences

def document_substructure_decomposition(Q, D, S, ctx):
    # Extract paragraphs and sentence pairs from the text
    paragraphs = chunk_documents(ctx.doc_texts, split_paragraphs)
    sentence_pairs = chunk_documents(ctx.doc_texts, sentence_pairs)

    # Compute the scores of paragraphs and sentence pairs
    paragraph_scores = chunk_scores(Q, ctx, "paragraph", "max", mask)
    sentence_pair_scores = chunk_scores(Q, ctx, "sentence_pair", "topmean", mask)

    # Mix the best piece and the mean piece
    mixed_scores = paragraph_scores + sentence_pair_scores

    # Fuse the scores with the original query-document similarity scores
    fused_scores = fuse([S, mixed_scores], [1, 1], mask=mask)

    return fused_scores

def program(Q, D, S, ctx):
    # Add the idea of Document substructure decomposition as a new channel
    prefix1 = prefix_scores(Q, D, Q.shape[1] // 4)  # (n_q, Q.shape[1] // 4)
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, Q.shape[1] // 2)
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    document_scores = document_substructure_decomposition(Q, D, S, ctx)
    return rrf([lexical, document_scores, S], mask=mask)  # float32 (n_q, n_d)
