"""A deployed program as the reranker of other retrieval frameworks (optional extras).

Each adapter wraps a :class:`~embedding_ttc.deploy.Reranker` (passed in, or opened with
``from_index``) and hands it the framework's shortlist as texts
(:meth:`~embedding_ttc.deploy.Reranker.rerank_texts`): documents the index holds use their
stored index-time work, the others are computed live.

* :mod:`~embedding_ttc.integrations.langchain`: a LangChain document compressor
  (``pip install -e '.[langchain]'``);
* :mod:`~embedding_ttc.integrations.llamaindex`: a LlamaIndex node postprocessor
  (``pip install -e '.[llamaindex]'``);
* :mod:`~embedding_ttc.integrations.pyterrier`: a PyTerrier re-ranking transformer
  (``pip install -e '.[pyterrier]'``; pure Python, no Java).

What they share (a framework's document as a candidate, the ranking of candidates) is in
:mod:`~embedding_ttc.integrations.candidates`. This package imports no framework: importing an
adapter whose framework is missing raises :class:`~embedding_ttc.errors.MissingExtraError` with
the install hint.
"""
