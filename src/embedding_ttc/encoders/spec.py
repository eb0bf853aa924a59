"""Registry entries for encoders: what an encoder is before it is loaded, and how to load it."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from embedding_ttc.encoders.base import Encoder, ViewSpec, shared_views


@dataclass(frozen=True)
class EncoderSpec:
    """A registered encoder: metadata known without loading it, and a factory.

    Attributes:
        name: registry name.
        family: architecture family (reports group by it).
        dim: full embedding dimension.
        views: realisation of each view (see :class:`~embedding_ttc.encoders.base.ViewSpec`).
        factory: builds the encoder (loads weights); may raise
            :class:`~embedding_ttc.errors.EncoderUnavailableError`.
        requires: importable module names that must be present for the encoder to run here.
        offline: True when the weights ship inside an installed package (no network needed).
        description: one line for ``embedding-ttc encoders``.

    """

    name: str
    family: str
    dim: int
    factory: Callable[[], Encoder]
    views: Mapping[str, ViewSpec] = field(default_factory=shared_views)
    requires: tuple[str, ...] = ()
    offline: bool = False
    description: str = ""

    def missing(self) -> list[str]:
        """Required modules that are not importable here."""
        return [m for m in self.requires if importlib.util.find_spec(m) is None]

    def available(self) -> bool:
        """True when this encoder can run on this machine without a network."""
        return self.offline and not self.missing()

    @property
    def collapsed(self) -> bool:
        """True when all four views share one realisation."""
        return len(set(self.views.values())) == 1
