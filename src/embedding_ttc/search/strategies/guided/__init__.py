"""The guided strategy: the model chooses a parent genome's next edit, the renderer writes it.

* ``options``, ``flags``, ``factory``: its options record, command-line options and proposer;
* ``prompt``: what the model reads (the parent genome, its results and lessons, the parts it
  may add);
* ``proposer``: asks for one edit under a JSON schema
  (:mod:`embedding_ttc.search.structural.edits`) and renders the program. It needs a backend
  that constrains a reply to a JSON schema (llama-cpp, openai).
"""

from embedding_ttc.search.strategies.base import Strategy
from embedding_ttc.search.strategies.guided.factory import build
from embedding_ttc.search.strategies.guided.flags import FLAGS, from_flags
from embedding_ttc.search.strategies.guided.options import GUIDED_OFFERS, GuidedOptions

STRATEGY = Strategy("guided", GuidedOptions, "json", build, FLAGS, from_flags)

__all__ = ["GUIDED_OFFERS", "STRATEGY", "GuidedOptions"]
