"""A 64-d static embedding model (Model2Vec style, int8) from ``tokenlearn-static-model``.

The wheel (import name ``static_model``) bakes in a 10k-token vocabulary with 64-d int8 vectors
(``static_model/model``) and a Rust encoder, ``encode_batch(model_dir, texts, max_length)``,
which tokenizes, truncates to ``max_length`` tokens, mean-pools and L2-normalises.
``static_model.get_embeddings`` calls it with ``max_length=512``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.encoders.base import BaseEncoder, EncoderInfo, shared_views
from embedding_ttc.encoders.packaged_common import batched, dist_revision, import_package
from embedding_ttc.errors import EncoderUnavailableError

DIST = "tokenlearn-static-model"


class TokenlearnStaticEncoder(BaseEncoder):
    """The tokenlearn static model (64-d); views collapse.

    ``max_length`` is passed to the Rust encoder, which truncates with the model's own
    tokenizer (no special tokens). The default is the package's own 512.

    Args:
        batch_size: texts per call of the Rust encoder.

    """

    independent_rows = True
    """A text's row is its tokens' static vectors pooled, whatever else is in the batch (a
    sharded encode, :mod:`embedding_ttc.encoders.sharded`, may cut a call anywhere)."""

    def __init__(self, *, batch_size: int = 1024) -> None:
        self.info = EncoderInfo(
            name="tokenlearn-static-64",
            family="static",
            model_id=DIST,
            revision=dist_revision(DIST),
            dim=64,
            views=shared_views(),
            max_length=512,
        )
        self.batch_size = batch_size
        self._loaded: tuple[Any, str] | None = None

    def load(self) -> tuple[Any, str]:
        """Return ``(encode_batch, model_dir)`` of the installed package (checked once)."""
        if self._loaded is None:
            static_model = import_package("static_model", DIST, "The tokenlearn static encoder")
            try:
                folder = static_model.ensure_model_ready(
                    Path(str(static_model.__file__)).parent / "model"
                )
            except FileNotFoundError as exc:
                raise EncoderUnavailableError(str(exc)) from exc
            self._loaded = (static_model.encode_batch, str(folder))
        return self._loaded

    def _embed(
        self, texts: list[str], *, adapter: str | None, max_length: int | None
    ) -> NDArray[np.floating]:
        encode_batch, folder = self.load()
        budget = max_length if max_length is not None else self.info.max_length
        out = np.empty((len(texts), self.info.dim), dtype=np.float32)
        for start, chunk in batched(texts, self.batch_size):
            rows = encode_batch(folder, list(chunk), budget)
            out[start : start + len(chunk)] = np.asarray(rows, dtype=np.float32)
        return out
