"""The proposer's prompts: the full prompt, the compact prompt for small models, and their parts.

* ``common``: what both prompts share (sections, fences, clipped notes, the constraints);
* ``primitives``: the allowed imports and the primitives, listed from the code;
* ``full``: the paper's full prompt (:func:`~embedding_ttc.search.prompts.full.render_prompt`);
* ``small_model``: the compact prompt (style ``compact``) within a token budget
  (:func:`~embedding_ttc.search.prompts.small_model.render_compact_prompt`);
* ``helper_list``: the compact prompt's list of helpers with their shapes;
* ``examples``: the compact prompt's two worked example programs;
* ``inspirations``: the one list of research ideas every prompt points at;
* ``directives``: the one concrete thing each generation is asked to build.
"""

from typing import Literal

PromptStyle = Literal["full", "compact"]
"""Which prompt a proposer renders: the full one (API models) or the compact one (small models)."""

DEFAULT_CONTEXT_TOKENS = 3000
"""The default budget in tokens of the compact prompt (``--context-tokens``)."""

DEFAULT_EDIT_CONTEXT_TOKENS = 5000
"""The default budget of the edit prompt (:mod:`embedding_ttc.search.strategies.edit.prompt`):
a whole parent program (up to about 1,500 tokens for the longest library programs) beside the
compact prompt's run-constant sections."""
