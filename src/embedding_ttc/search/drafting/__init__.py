"""Drafting around a chat model: several drafts, a cheap pre-check and repair turns.

* ``proposer``: :class:`~embedding_ttc.search.drafting.proposer.DraftingProposer`, which wraps
  any chat backend;
* ``options``: its defaults per backend and their resolution from the command line's options;
* ``precheck``: the cheap check of a draft (parse, static checks, novelty, a sandboxed run on
  the tiny task of ``synthetic``);
* ``repairs``: mechanical repairs of common small-model slips, without a model call;
* ``hints``: one concrete fix for each common failure, sent back in a repair turn.
"""
