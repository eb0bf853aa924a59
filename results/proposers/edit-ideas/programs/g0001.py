"""adds ColBERT MaxSim over sentences (the suggested idea)

Novelty: adds ColBERT MaxSim over sentences (the suggested idea)
Hypothesis: 
Parent: BM25DenseRRF
Edit: the reply's whole program (no block applied)
"""

from embedding_ttc.programs.primitives.channels import chunk_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents, sentence_pairs, split_paragraphs, split_sentences
from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap, query_term_coverage, rare_term_idf, tokenize
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents, sentence_pairs, split_paragraphs, split_sentences
from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap, query_term_coverage, rare_term_idf, tokenize
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    mask = mask_for(ctx, S)  # None, or (n_q, n_d) bool: each query's candidates
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    M = chunk_scores(Q, ctx, "sentence", "max", mask)  # (n_q, n_d) BM25 over sentences
    M2 = chunk_scores(Q, ctx, "paragraph", "topmean", mask)  # (n_q, n_d) BM25 over paragraphs
    return rrf([lexical, S, M, M2], mask=[1.0], k=mask)  # float32 (n_q, n_d)
