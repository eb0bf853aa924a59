"""Deploy a program as a second-stage reranker: an index built once, a query-time API, a service.

* :mod:`~embedding_ttc.deploy.corpus`: documents, and the corpus and query files;
* :mod:`~embedding_ttc.deploy.index`: the versioned, checksummed index directory (load,
  build, add, compact, re-index the ANN), its documents' texts
  (:mod:`~embedding_ttc.deploy.index_texts`), its files read back
  (:mod:`~embedding_ttc.deploy.arrays`) and its :mod:`~embedding_ttc.deploy.errors`;
* the index's ``manifest.json``: its records (:mod:`~embedding_ttc.deploy.manifest`, on
  :mod:`~embedding_ttc.deploy.manifest_base`; the program's in
  :mod:`~embedding_ttc.deploy.program_records`), read and checked by
  :mod:`~embedding_ttc.deploy.manifest_reader`;
* :mod:`~embedding_ttc.deploy.segment`: one immutable segment of an index (its texts on disk:
  :mod:`~embedding_ttc.deploy.doc_table`; its FAISS index: :mod:`~embedding_ttc.deploy.ann`),
  and :mod:`~embedding_ttc.deploy.first_stage`: the dense and BM25 first stages over segments;
* :mod:`~embedding_ttc.deploy.build`: writing a build or an addition (one new segment),
  :mod:`~embedding_ttc.deploy.compact`: merging the segments,
  :mod:`~embedding_ttc.deploy.reindex`: rewriting their ANN indexes, and
  :mod:`~embedding_ttc.deploy.recording`: the recording pass that keeps a program's index-time
  encodes;
* :mod:`~embedding_ttc.deploy.store`: how the query path gets what was precomputed (an
  ``encode_fn`` served from the stored embeddings, the reference sample), with the stored
  chunk embeddings by row (:mod:`~embedding_ttc.deploy.chunk_rows`); what that is, each
  library program declares (its :class:`~embedding_ttc.programs.recipe.Recipe`);
* a program found by the search, deployed from its file: :mod:`~embedding_ttc.deploy.program_file`
  (reading, the static checks, serving in the sandbox) with its
  :mod:`~embedding_ttc.deploy.provenance`, and the recipe derived at build time
  (:mod:`~embedding_ttc.deploy.derive`, measured by :mod:`~embedding_ttc.deploy.probe`);
* :mod:`~embedding_ttc.deploy.reranker`: :class:`Reranker` (``rerank``, ``search`` and their
  batch forms; ``rerank_texts`` for documents given by their texts, held by the index or not),
  its program calls (:mod:`~embedding_ttc.deploy.live_scoring`), the documents a caller gives
  as texts (:mod:`~embedding_ttc.deploy.text_documents` read them,
  :mod:`~embedding_ttc.deploy.caller_texts` scores them) and what its calls return
  (:mod:`~embedding_ttc.deploy.rerank_results`, :mod:`~embedding_ttc.deploy.call_stats`);
* :mod:`~embedding_ttc.deploy.service`: the FastAPI app (the ``serve`` extra), with the
  ``/v1/rerank`` API Cohere's and Jina's clients speak; several processes over one index
  (:mod:`~embedding_ttc.deploy.workers`), the index read into the page cache first
  (:mod:`~embedding_ttc.deploy.preload`) and freed memory kept between requests
  (:mod:`~embedding_ttc.deploy.allocator`).

    from embedding_ttc.deploy import Reranker
    reranker = Reranker.load("indexes/scifact-SoftCentroid")
    reranker.search("what causes fever?", k=10)

    Index.build("indexes/scifact-g0013", docs, encoder=encoder,
                program=read_deployable("results/search/programs/g0013.py"))
"""

from embedding_ttc.deploy.corpus import Document, read_corpus
from embedding_ttc.deploy.errors import (
    CandidateRequestError,
    DeployError,
    EncoderMismatchError,
    IndexCorruptError,
)
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.program_file import read_deployable
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.programs.catalog import recipe_for
from embedding_ttc.programs.recipe import Recipe

__all__ = [
    "CandidateRequestError",
    "DeployError",
    "Document",
    "EncoderMismatchError",
    "Index",
    "IndexCorruptError",
    "Recipe",
    "Reranker",
    "read_corpus",
    "read_deployable",
    "recipe_for",
]
