"""The encoder protocol, its views, and the shared finishing step (Matryoshka ``dim``, L2 norm).

An encoder maps texts to L2-normalised float32 rows under a *view*. The four views are the task
adapters of multi-LoRA encoders (jina-embeddings-v3/v5): ``retrieval.query``,
``retrieval.passage``, ``text-matching`` and ``classification``. Each encoder declares how it
realises every view (:class:`ViewSpec`): a LoRA adapter, a prompt or prefix, or one shared
encoding for all views, in which case the views *collapse* and the encoder says so.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.errors import UnknownNameError
from embedding_ttc.registry import closest

QUERY = "retrieval.query"
PASSAGE = "retrieval.passage"
TEXT_MATCHING = "text-matching"
CLASSIFICATION = "classification"
VIEWS: tuple[str, ...] = (QUERY, PASSAGE, TEXT_MATCHING, CLASSIFICATION)

Embeddings = NDArray[np.float32]


@dataclass(frozen=True)
class ViewSpec:
    """How an encoder realises one view.

    Attributes:
        kind: ``"adapter"`` (a LoRA task adapter selected by name), ``"prompt"`` (a prefix
            prepended to every text) or ``"shared"`` (the plain encoding, identical for all
            views).
        value: the adapter name or the prompt text; empty for ``"shared"``.

    """

    kind: Literal["adapter", "prompt", "shared"]
    value: str = ""

    def describe(self) -> str:
        """A short human-readable form, e.g. ``prompt 'query: '``."""
        return self.kind if self.kind == "shared" else f"{self.kind} {self.value!r}"


SHARED = ViewSpec("shared")


def shared_views() -> dict[str, ViewSpec]:
    """Every view realised by the same plain encoding (an encoder without adapters or prompts)."""
    return dict.fromkeys(VIEWS, SHARED)


@dataclass(frozen=True)
class EncoderInfo:
    """What an encoder is: identity (for caching and records), geometry and views.

    Attributes:
        name: the registry name (``all-MiniLM-L6-v2``).
        family: architecture family, for reports (``MiniLM-L6``).
        model_id: the model's canonical id (a Hugging Face id or a package name).
        revision: a version string that changes whenever the weights or the code that
            produces embeddings changes; part of every cache key.
        dim: full embedding dimension.
        views: the realisation of each of the four views.
        max_length: the default input length in tokens (the model's own truncation).
        matryoshka: whether truncating to a prefix of dimensions is meaningful for this model
            (truncation is allowed for every encoder; this flag only documents intent).

    """

    name: str
    family: str
    model_id: str
    revision: str
    dim: int
    views: Mapping[str, ViewSpec] = field(default_factory=shared_views)
    max_length: int | None = None
    matryoshka: bool = False

    @property
    def collapsed(self) -> bool:
        """True when all views share one realisation (programs asking for adapters still run)."""
        return len(set(self.views.values())) == 1

    @property
    def distinct_views(self) -> int:
        """Number of distinct realisations among the four views."""
        return len(set(self.views.values()))


@runtime_checkable
class Encoder(Protocol):
    """A frozen text encoder: texts in, L2-normalised float32 rows out."""

    @property
    def info(self) -> EncoderInfo:
        """Identity, geometry and views of this encoder."""
        ...

    def encode(
        self,
        texts: Sequence[str],
        *,
        view: str,
        dim: int | None = None,
        max_length: int | None = None,
    ) -> Embeddings:
        """Encode ``texts`` under ``view``.

        Args:
            texts: the texts, in order.
            view: one of :data:`VIEWS`.
            dim: keep the first ``dim`` dimensions (Matryoshka), then re-normalise.
            max_length: truncate each input to this many tokens (the model's own tokenizer).

        Returns:
            A ``(len(texts), dim or info.dim)`` float32 array with unit-norm rows.

        """
        ...


def check_view(view: str) -> str:
    """Return ``view`` if it is one of the four views, else raise naming the closest."""
    if view not in VIEWS:
        near = closest(view, list(VIEWS))
        hint = f" Did you mean {near[0]!r}?" if near else ""
        raise UnknownNameError(f"unknown view {view!r}.{hint} Views: {', '.join(VIEWS)}")
    return view


def check_dim(dim: int | None, full: int) -> int:
    """Validate a Matryoshka dimension against the encoder's full dimension."""
    if dim is None:
        return full
    if not isinstance(dim, int) or isinstance(dim, bool) or not 1 <= dim <= full:
        raise ValueError(f"dim must be an integer in [1, {full}], got {dim!r}")
    return dim


def check_max_length(max_length: int | None) -> int | None:
    """Validate a token budget (``None`` keeps the model's own)."""
    if max_length is None:
        return None
    if not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 1:
        raise ValueError(f"max_length must be a positive integer, got {max_length!r}")
    return max_length


def finish(raw: NDArray[np.floating], dim: int | None = None) -> Embeddings:
    """Truncate to the first ``dim`` columns, L2-normalise each row, return float32.

    A zero row (for example an empty text under a static model) stays zero rather than
    becoming NaN, so every downstream cosine is finite.
    """
    arr = np.asarray(raw, dtype=np.float32)
    if arr.ndim != 2:
        raise ValueError(f"encoder returned an array of shape {arr.shape}, expected 2-D")
    if dim is not None:
        arr = arr[:, :dim]
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    out = arr / np.where(norms > 0, norms, 1.0)
    return np.ascontiguousarray(out, dtype=np.float32)


class BaseEncoder(ABC):
    """Shared plumbing for backends: validation, prompts, ``dim`` and normalisation.

    A backend subclass sets :attr:`info` and implements :meth:`_embed`, which receives the texts
    with the view's prompt already prepended and the adapter name (or ``None``).
    """

    info: EncoderInfo

    def encode(
        self,
        texts: Sequence[str],
        *,
        view: str,
        dim: int | None = None,
        max_length: int | None = None,
    ) -> Embeddings:
        """See :meth:`Encoder.encode`."""
        spec = self.info.views[check_view(view)]
        dim = check_dim(dim, self.info.dim)
        max_length = check_max_length(max_length)
        if isinstance(texts, str):
            raise TypeError("texts must be a sequence of strings, not a single string")
        if len(texts) == 0:
            return np.zeros((0, dim), dtype=np.float32)
        inputs = [spec.value + t for t in texts] if spec.kind == "prompt" else list(texts)
        adapter = spec.value if spec.kind == "adapter" else None
        raw = self._embed(inputs, adapter=adapter, max_length=max_length)
        if raw.shape[0] != len(texts):
            raise RuntimeError(
                f"{self.info.name} returned {raw.shape[0]} rows for {len(texts)} texts"
            )
        return finish(raw, dim)

    @abstractmethod
    def _embed(
        self, texts: list[str], *, adapter: str | None, max_length: int | None
    ) -> NDArray[np.floating]:
        """Raw (unnormalised, full-dimension) embeddings of already-prompted texts."""
