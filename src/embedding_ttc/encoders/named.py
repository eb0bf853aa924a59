"""An encoder given by value: what a worker process loads for itself.

A loaded encoder holds model weights and cannot be shipped to another process; its registry
name, backend and cache settings can. Ray workers of the transfer matrix and of the search
build their encoder from a :class:`NamedEncoder`, as the command line builds its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from embedding_ttc.encoders.base import Encoder


@dataclass(frozen=True)
class NamedEncoder:
    """An encoder by registry name, wrapped in the on-disk cache unless ``use_cache`` is off.

    Attributes:
        name: the registry name (``name@backend`` allowed, see
            :func:`~embedding_ttc.encoders.catalog.load_encoder`).
        backend: the runtime (``torch`` or ``onnx-int8``).
        cache_dir: the embedding cache (``None``: the default cache directory of the process
            that loads it, ``EMBEDDING_TTC_CACHE`` or the user cache).
        use_cache: wrap the encoder in :class:`~embedding_ttc.encoders.cache.CachedEncoder`.
        device: where it runs (:mod:`embedding_ttc.encoders.device`); ``auto`` is resolved by
            the process that loads it, so each Ray worker takes its own GPU if it has one.

    """

    name: str
    backend: str = "torch"
    cache_dir: Path | None = None
    use_cache: bool = True
    device: str = "auto"

    def load(self) -> Encoder:
        """Load the encoder (its weights) in this process."""
        from embedding_ttc.encoders.cache import CachedEncoder
        from embedding_ttc.encoders.catalog import load_encoder

        encoder = load_encoder(self.name, self.backend, self.device)
        return CachedEncoder(encoder, self.cache_dir) if self.use_cache else encoder


@lru_cache(maxsize=1)
def worker_encoder(named: NamedEncoder) -> Encoder:
    """The worker's encoder, loaded once per worker process (Ray reuses its workers).

    A Ray task body calls this rather than :meth:`NamedEncoder.load`, so a worker that runs
    many tasks with the same encoder loads its weights once (the sharded encoder of a build,
    the search's task executor).
    """
    return named.load()
