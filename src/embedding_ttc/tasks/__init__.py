"""Retrieval tasks: the record, loaders (BEIR folders, pools, generated, MTEB) and suites.

* :mod:`~embedding_ttc.tasks.task`: the task record, with
  :mod:`~embedding_ttc.tasks.judgements` (judgements joined the same way by every loader) and
  :mod:`~embedding_ttc.tasks.fingerprint` (a task's content hash);
* loaders: :mod:`~embedding_ttc.tasks.beir` (BEIR folders, full corpus or pools),
  :mod:`~embedding_ttc.tasks.irds_loader` (``irds:``), :mod:`~embedding_ttc.tasks.mteb_loader`
  (``mteb:``), ``generated/`` (long-document passkey and needle tasks) and ``packaged/`` (the
  tasks shipped inside the package);
* :mod:`~embedding_ttc.tasks.catalog`: tasks by name, the data root and the suites
  (``suites/``); :mod:`~embedding_ttc.tasks.listing`: what ``embedding-ttc tasks`` lists;
* ``data fetch``: :mod:`~embedding_ttc.tasks.beir_archives` (what can be fetched),
  :mod:`~embedding_ttc.tasks.download` and :mod:`~embedding_ttc.tasks.fetch`.
"""

from embedding_ttc.tasks.task import RetrievalTask, join_title_text

__all__ = ["RetrievalTask", "join_title_text"]
