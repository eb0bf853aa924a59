"""A search run on disk, read and written without the search itself.

A run directory holds ``ledger.jsonl``, ``programs/``, ``search.json`` and ``split.json``.
The search appends to it; the report, the transfer study and a deployed program's provenance
read it. Each concept has its module:

* :mod:`~embedding_ttc.runs.records`: one ledger line per candidate
  (:class:`~embedding_ttc.runs.records.LedgerRecord`), by objective and scope;
* :mod:`~embedding_ttc.runs.ledger`: the append-only ledger and the program sources beside it;
* :mod:`~embedding_ttc.runs.config`: the settings a run is tied to (``search.json``);
* :mod:`~embedding_ttc.runs.split`: the validation split of each task's queries
  (``split.json``);
* :mod:`~embedding_ttc.runs.frontier`: the admission rules and the Pareto set, derived from
  the ledger.
"""
