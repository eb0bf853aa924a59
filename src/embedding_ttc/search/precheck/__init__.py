"""The pre-check of a model's program and what a repair turn is told, shared by the strategies.

* ``check``: the cheap check of a program before its evaluation (parse, static checks,
  novelty, a sandboxed run on the tiny task of ``synthetic``), and the run's own pre-check;
* ``synthetic``: the tiny task the pre-check runs a program on;
* ``repairs``: mechanical repairs of common small-model slips, without a model call;
* ``mask_keyword``: the repair (and the committed programs' migration) that passes the mask of
  ``rrf`` and ``fuse`` by keyword;
* ``names``: the names a source binds, which the repairs read scope from;
* ``hints``: one concrete fix for each common failure, sent back in a repair turn.

The draft and edit strategies both use them (:mod:`embedding_ttc.search.strategies.draft`,
:mod:`embedding_ttc.search.strategies.edit`).
"""
