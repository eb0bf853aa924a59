"""Deploy a program as a second-stage reranker: an index built once, a query-time API, a service.

* :mod:`~embedding_ttc.deploy.corpus`: documents, and the corpus and query files;
* :mod:`~embedding_ttc.deploy.index`: the versioned, checksummed index directory (load,
  build, add), with its :mod:`~embedding_ttc.deploy.manifest` and
  :mod:`~embedding_ttc.deploy.errors`;
* :mod:`~embedding_ttc.deploy.build`: writing a whole version (a build, an addition), and
  :mod:`~embedding_ttc.deploy.record`: the recording pass that keeps a program's index-time
  encodes;
* :mod:`~embedding_ttc.deploy.store`: how the query path gets what was precomputed (an
  ``encode_fn`` served from the stored embeddings, the reference sample); what that is, each
  program declares (its :class:`~embedding_ttc.programs.recipe.Recipe`);
* :mod:`~embedding_ttc.deploy.reranker`: :class:`Reranker` (``rerank``, ``search`` and their
  batch forms);
* :mod:`~embedding_ttc.deploy.service`: the FastAPI app (the ``serve`` extra).

    from embedding_ttc.deploy import Reranker
    reranker = Reranker.load("indexes/scifact-SoftCentroid")
    reranker.search("what causes fever?", k=10)
"""

from embedding_ttc.deploy.corpus import Document, read_corpus
from embedding_ttc.deploy.errors import DeployError, EncoderMismatchError, IndexCorruptError
from embedding_ttc.deploy.index import Index
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
