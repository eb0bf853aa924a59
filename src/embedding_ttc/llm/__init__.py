"""Local language models that PyPI packages carry, for the offline proposer.

:mod:`embedding_ttc.llm.gguf` assembles a GGUF chat model from its PyPI chunk packages into the
user cache once and returns its path (:func:`~embedding_ttc.llm.gguf.model_path`).
"""

from embedding_ttc.llm.gguf import DEFAULT_LLM, MODELS, model_path

__all__ = ["DEFAULT_LLM", "MODELS", "model_path"]
