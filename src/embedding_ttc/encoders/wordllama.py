"""WordLlama ``l2_supercat``: static token embeddings distilled from LLaMA-2, mean-pooled.

The ``wordllama`` wheel ships the 256-d Matryoshka weights (``weights/l2_supercat_256.safetensors``)
and the tokenizer (``tokenizers/l2_supercat_tokenizer_config.json``). ``WordLlama.load`` looks
for the tokenizer in a ``tokenizer/`` folder (singular) inside the package, which does not exist,
so it would fall back to a download; passing the package folder itself as ``cache_dir`` makes
both files resolve to the copies in the wheel, and ``disable_download=True`` guarantees that
nothing is fetched.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.encoders.base import BaseEncoder, EncoderInfo, shared_views
from embedding_ttc.encoders.packaged_common import dist_revision, import_package, keep_root_logging
from embedding_ttc.errors import EncoderUnavailableError

CONFIG = "l2_supercat"
DIM = 256
TOKEN_BUDGET = 1 << 20
"""Padded tokens per pooling batch: the gathered ``(batch, longest, 256)`` float32 block is 1 GiB.

``WordLlamaInference.embed`` pads every batch to its longest text, so 256 transcripts of 40,000
tokens would gather 10 GB (and its pooling as much again): the heads' training pass on the
discovery suite was killed for memory at 21 GB. Batches are cut so that ``size × longest`` stays
within this budget; a text longer than the budget goes alone. Padding is masked out of the mean,
so the cut does not change any embedding.

A text's tokens are bounded by its UTF-8 length plus one (every piece of the byte-fallback
tokenizer covers at least one byte; the word-start marker may add one), which
:func:`token_bound` uses instead of tokenising twice: the package tokenises each batch anyway.
"""


class WordLlamaEncoder(BaseEncoder):
    """WordLlama l2_supercat (256-d, Matryoshka-trained at 64/128/256); views collapse.

    ``max_length`` truncates with WordLlama's own tokenizer (LLaMA-2 pieces, no special
    tokens). By default nothing is truncated, as in ``WordLlamaInference.embed``; the model was
    trained on inputs of up to 256 tokens.

    Args:
        batch_size: at most this many texts per tokenizer / pooling batch (fewer when long:
            :data:`TOKEN_BUDGET`).

    """

    def __init__(self, *, batch_size: int = 256) -> None:
        self.info = EncoderInfo(
            name="wordllama-l2-supercat",
            family="WordLlama",
            model_id="dleemiller/word-llama-l2-supercat",
            revision=dist_revision("wordllama"),
            dim=DIM,
            views=shared_views(),
            max_length=None,
            matryoshka=True,
        )
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    def load(self) -> Any:
        """Load the bundled weights and tokenizer once (a ``WordLlamaInference``)."""
        if self._model is None:
            with keep_root_logging():  # wordllama calls logging.basicConfig on import
                wordllama = import_package("wordllama", "wordllama", "The WordLlama encoder")
                folder = Path(str(wordllama.__file__)).parent
                try:
                    model = wordllama.WordLlama.load(
                        CONFIG, dim=DIM, cache_dir=folder, disable_download=True
                    )
                except (FileNotFoundError, ValueError) as exc:
                    raise EncoderUnavailableError(
                        f"the wordllama wheel in {folder} lacks the {CONFIG} {DIM}-d weights or "
                        f"tokenizer: {exc}"
                    ) from exc
            if model.embedding.shape[1] != DIM:
                raise EncoderUnavailableError(
                    f"wordllama {CONFIG} loaded {model.embedding.shape[1]}-d weights, "
                    f"expected {DIM}"
                )
            self._model = model
        return self._model

    def _embed(
        self, texts: list[str], *, adapter: str | None, max_length: int | None
    ) -> NDArray[np.floating]:
        model = self.load()
        tokenizer = model.tokenizer
        with self._lock:  # truncation is tokenizer state; one call at a time
            if max_length is not None:
                tokenizer.enable_truncation(max_length=max_length)
            try:
                lengths = [token_bound(t, max_length) for t in texts]
                parts = [
                    model.embed(texts[a:b], norm=False, batch_size=b - a)
                    for a, b in token_batches(lengths, self.batch_size, TOKEN_BUDGET)
                ]
            finally:
                tokenizer.no_truncation()
        if not parts:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.concatenate([np.asarray(p, dtype=np.float32) for p in parts])


def token_bound(text: str, max_length: int | None) -> int:
    """An upper bound on the tokens of ``text`` (:data:`TOKEN_BUDGET`), at most ``max_length``."""
    bound = len(text.encode("utf-8")) + 1
    return bound if max_length is None else min(bound, max_length)


def token_batches(lengths: list[int], size: int, budget: int) -> list[tuple[int, int]]:
    """Consecutive ``[a, b)`` ranges of at most ``size`` texts with ``count × longest ≤ budget``.

    A text longer than ``budget`` forms a batch of its own. Every index is in exactly one range.
    """
    out: list[tuple[int, int]] = []
    a, longest = 0, 0
    for i, n in enumerate(lengths):
        wider = max(longest, n, 1)
        if i > a and ((i - a + 1) * wider > budget or i - a >= size):
            out.append((a, i))
            a, wider = i, max(n, 1)
        longest = wider
    if lengths:
        out.append((a, len(lengths)))
    return out
