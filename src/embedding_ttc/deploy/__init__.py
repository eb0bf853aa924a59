"""Deploy a program as a second-stage reranker: an index built once, a query-time API, a service.

* :mod:`~embedding_ttc.deploy.split`: how the query path gets what a program precomputed at
  index time (an ``encode_fn`` served from the index); what that is, each program declares
  (its :class:`~embedding_ttc.programs.recipe.Recipe`);
* :mod:`~embedding_ttc.deploy.index`: the versioned, checksummed index directory (build, load,
  add);
* :mod:`~embedding_ttc.deploy.reranker`: :class:`Reranker` (``rerank``, ``search`` and their
  batch forms);
* :mod:`~embedding_ttc.deploy.service`: the FastAPI app (the ``serve`` extra).

    from embedding_ttc.deploy import Reranker
    reranker = Reranker.load("indexes/scifact-SoftCentroid")
    reranker.search("what causes fever?", k=10)
"""

from embedding_ttc.deploy.index import (
    DeployError,
    Document,
    EncoderMismatchError,
    Index,
    IndexCorruptError,
    read_corpus,
)
from embedding_ttc.deploy.reranker import CandidateError, Reranker
from embedding_ttc.programs.catalog import recipe_for
from embedding_ttc.programs.recipe import Recipe

__all__ = [
    "CandidateError",
    "DeployError",
    "Document",
    "EncoderMismatchError",
    "Index",
    "IndexCorruptError",
    "Recipe",
    "Reranker",
    "read_corpus",
    "recipe_for",
]
