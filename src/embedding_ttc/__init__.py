"""embedding-ttc: test-time compute for frozen text-embedding models.

A *program* ``P(Q, D, S, ctx) -> S'`` rescored the cosine matrix of a frozen encoder, possibly
calling the encoder again through a metered ``encode_fn``. This package provides the encoder API,
retrieval tasks and suites, the nDCG@10 evaluator and the command line tool.
"""

__version__ = "0.1.0"
