"""replace the original chunking function with chunk_documents.

Novelty: replace the original chunking function with chunk_documents.
Hypothesis: Using chunk_documents instead of chunks improves the fusion process by ensuring that each channel is properly aligned with the document embeddings.
Parent: g0000-P0
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.channels import fuse
from embedding_ttc.programs.primitives.channels import chunk_documents


def program(Q, D, S, ctx):
    return fuse(chunks(Q, ctx), weights=None, mask=None, method='zscore')  # add a new feedback step
