"""The draft strategy: the model writes a whole program per generation.

* ``options``: :class:`~.options.DraftOptions` and the defaults per backend;
* ``flags``: its command-line options, and a new run's options from them;
* ``factory``: the proposer the options name;
* ``single``: :class:`~.single.SingleDraftProposer`, one request of the full prompt (the
  strategy without aids);
* ``proposer``: :class:`~.proposer.DraftingProposer`, several drafts with a pre-check and
  repair turns (:mod:`embedding_ttc.search.precheck`).

Its prompts are the shared full and compact prompts (:mod:`embedding_ttc.search.prompts`).
"""

from embedding_ttc.search.strategies.base import Strategy
from embedding_ttc.search.strategies.draft.factory import build
from embedding_ttc.search.strategies.draft.flags import FLAGS, from_flags
from embedding_ttc.search.strategies.draft.options import (
    API_DEFAULTS,
    LOCAL_BACKENDS,
    LOCAL_DEFAULTS,
    DraftingDefaults,
    DraftOptions,
    defaults_for,
)

STRATEGY = Strategy("draft", DraftOptions, "chat", build, FLAGS, from_flags)

__all__ = [
    "API_DEFAULTS",
    "LOCAL_BACKENDS",
    "LOCAL_DEFAULTS",
    "STRATEGY",
    "DraftOptions",
    "DraftingDefaults",
    "defaults_for",
]
