"""Drafting: the model writes a whole program per generation.

* ``single``: :class:`~embedding_ttc.search.drafting.single.SingleDraftProposer`, one request
  of the full prompt (the draft strategy without aids);
* ``proposer``: :class:`~embedding_ttc.search.drafting.proposer.DraftingProposer`, several
  drafts with a pre-check and repair turns (:mod:`embedding_ttc.search.precheck`).

Their options and defaults per backend are the draft strategy's
(:mod:`embedding_ttc.search.strategies.draft`).
"""
