"""The edit strategy: a language model as a mutation operator on one parent program.

* ``options``, ``flags``, ``factory``: its options record, command-line options and proposer;
* ``proposer``: one generation (with a repair turn), the parent from
  :mod:`embedding_ttc.search.population`;
* ``prompt``: what the model reads; ``blocks``: the search/replace edit it returns, applied;
* ``seeds``: the search-program forms of library programs an edit starts from;
* ``suggest``: the idea the parent lacks, named in the prompt.

The lessons it reads are :mod:`embedding_ttc.search.lessons`.
"""

from embedding_ttc.search.strategies.base import Strategy
from embedding_ttc.search.strategies.edit.factory import build
from embedding_ttc.search.strategies.edit.flags import FLAGS, from_flags
from embedding_ttc.search.strategies.edit.options import EDIT_REPAIR_ROUNDS, EditOptions

STRATEGY = Strategy("edit", EditOptions, "chat", build, FLAGS, from_flags)

__all__ = ["EDIT_REPAIR_ROUNDS", "STRATEGY", "EditOptions"]
