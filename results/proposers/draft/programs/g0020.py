"""
Novelty: Decomposes the documents into smaller pieces, measures their score distribution, and uses this information to fuse with the cosine scores.
Hypothesis: By decomposing documents into smaller pieces and analyzing their score distribution, we can better understand how each query interacts with the document, potentially improving the relevance of the results.
"""
import numpy as np

from embedding_ttc.programs.primitives.channels import fuse, chunk_scores, zscore_rows
from embedding_ttc.programs.primitives.scores import zscore_cols, top_k_indices
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents, split_sentences
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
W_S = 1.0
W_BM25 = 0.5
W_QTC = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)

    # Decompose documents into pieces
    Q_paragraphs = chunk_scores(Q, ctx, "paragraph", "max", mask)
    Q_sentence_pairs = chunk_scores(Q, ctx, "sentence_pair", "topmean", mask)

    # Standardize scores
    S_paragraphs = zscore_rows(S, mask)
    S_sentence_pairs = zscore_cols(S, mask)

    # Calculate how peaked each row is (gap between best and 10th best score)
    peaks_paragraphs = np.sort(S_paragraphs, axis=1)[:, -1] - np.sort(S_paragraphs, axis=1)[:, -10]
    peaks_sentence_pairs = np.sort(S_sentence_pairs, axis=1)[:, -1] - np.sort(S_sentence_pairs, axis=1)[:, -10]

    # Assign weights based on the gap
    weights_paragraphs = peaks_paragraphs / np.max(peaks_paragraphs)
    weights_sentence_pairs = peaks_sentence_pairs / np.max(peaks_sentence_pairs)

    # Fuse the channels with the cosine scores
    return fuse([S, S_paragraphs, S_sentence_pairs], [W_S, W_BM25, W_QTC], mask=mask, method='rrf')
