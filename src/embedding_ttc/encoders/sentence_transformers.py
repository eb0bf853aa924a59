"""The sentence-transformers backend: any Hugging Face model id, or a model folder on disk.

Views are realised by the model's own mechanism: a LoRA task adapter passed as the ``task``
argument of ``SentenceTransformer.encode`` (jina-embeddings-v3), a prompt prepended to the text
(e5, EmbeddingGemma, Qwen3-Embedding, bge), or nothing (views collapse). ``max_length`` sets the
model's token truncation (``max_seq_length``) for the duration of one call.

The model loads on the device the encoder was placed on (:meth:`SentenceTransformerEncoder.
place`, called by :func:`~embedding_ttc.encoders.device.place_encoder`; the CPU by default).
A model already loaded in Python is wrapped with :meth:`SentenceTransformerEncoder.from_model`.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.encoders.base import (
    VIEWS,
    BaseEncoder,
    EncoderInfo,
    ViewSpec,
    check_view,
    shared_views,
)
from embedding_ttc.errors import EncoderUnavailableError, MissingExtraError


def hub_offline() -> bool:
    """True when the Hugging Face hub is configured offline (``HF_HUB_OFFLINE``)."""
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes", "on"}


def embedding_dimension(model: Any) -> int | None:
    """The model's output dimension (the method was renamed in sentence-transformers 6)."""
    get_dim = getattr(model, "get_embedding_dimension", None)
    if get_dim is None:
        get_dim = model.get_sentence_embedding_dimension
    dim = get_dim()
    return int(dim) if dim is not None else None


def weights_revision(model: Any) -> str:
    """A revision string for a model held in memory: a digest of what makes its embeddings.

    The sha256 of every tensor of the state dict (name, shape, dtype, bytes), the module
    configuration (``repr``: pooling mode, normalisation) and ``max_seq_length``, so a
    fine-tuned or re-configured model never meets the cache entries of its former self. The
    tokenizer is assumed to belong to the weights. About 0.3 s for MiniLM's 90 MB.
    """
    import torch

    h = hashlib.sha256()
    for key, tensor in model.state_dict().items():
        h.update(f"{key}:{tuple(tensor.shape)}:{tensor.dtype}".encode())
        # Bytes, not values: numpy has no bfloat16.
        h.update(tensor.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy())
    h.update(repr(model).encode("utf-8"))
    h.update(f"max_seq_length={getattr(model, 'max_seq_length', None)}".encode())
    return f"weights-sha256={h.hexdigest()[:16]}"


def _prompt_views(prompts: Mapping[str, str] | None) -> dict[str, ViewSpec]:
    """Views from ``view -> prompt``: collapsed when ``None``, else a prompt for every view."""
    if prompts is None:
        return shared_views()
    for view in prompts:
        check_view(view)
    return {v: ViewSpec("prompt", prompts.get(v, "")) for v in VIEWS}


class SentenceTransformerEncoder(BaseEncoder):
    """A frozen sentence-transformers model.

    Args:
        name: registry name.
        family: architecture family.
        model: a Hugging Face model id or a local folder.
        revision: version string recorded in results and cache keys (a hub revision, or the
            version of the package that ships the folder).
        dim: the model's embedding dimension (checked when the model loads).
        views: realisation of each view.
        max_length: the default token budget (the model's ``max_seq_length`` if ``None``).
        trust_remote_code: needed by models with custom code (jina-embeddings-v3).
        batch_size: texts per forward batch.
        matryoshka: whether the model was trained for dimension truncation.
        device: the torch device the model loads on (a resolved name, see
            :func:`~embedding_ttc.encoders.device.resolve_device`).

    """

    def __init__(
        self,
        *,
        name: str,
        family: str,
        model: str | Path,
        revision: str,
        dim: int,
        views: Mapping[str, ViewSpec] | None = None,
        max_length: int | None = None,
        trust_remote_code: bool = False,
        batch_size: int = 32,
        matryoshka: bool = False,
        device: str = "cpu",
    ) -> None:
        self.source = str(model)
        self.info = EncoderInfo(
            name=name,
            family=family,
            model_id=name if Path(self.source).exists() else self.source,
            revision=revision,
            dim=dim,
            views=dict(views or shared_views()),
            max_length=max_length,
            matryoshka=matryoshka,
        )
        self.trust_remote_code = trust_remote_code
        self.batch_size = batch_size
        self.device = device
        self._model: Any = None
        self._lock = threading.Lock()

    @staticmethod
    def from_model(
        model: Any,
        *,
        name: str,
        prompts: Mapping[str, str] | None = None,
        family: str | None = None,
        revision: str | None = None,
        batch_size: int = 32,
    ) -> SentenceTransformerEncoder:
        """Wrap a ``SentenceTransformer`` already loaded in Python as an encoder.

        The model stays where it is (its device, its ``max_seq_length``); nothing is loaded.

        Args:
            model: the loaded ``sentence_transformers.SentenceTransformer``.
            name: the encoder's name in results, records and the embedding cache.
            prompts: ``view -> prompt`` prepended to every text of that view (views not named
                get no prompt), e.g. ``{"retrieval.query": "query: ", "retrieval.passage":
                "passage: "}``; ``None``: the views collapse into the plain encoding.
            family: architecture family for reports (default: the transformer's
                ``model_type``, e.g. ``bert``).
            revision: what identifies these weights in the embedding cache (default: a digest
                of the weights and configuration, :func:`weights_revision`).
            batch_size: texts per forward batch.

        Raises:
            EncoderUnavailableError: the model reports no embedding dimension.

        """
        dim = embedding_dimension(model)
        if not dim:
            raise EncoderUnavailableError(f"model {name!r} does not report an embedding dimension")
        seq = getattr(model, "max_seq_length", None)
        encoder = SentenceTransformerEncoder(
            name=name,
            family=family or _model_type(model),
            model=name,
            revision=revision or weights_revision(model),
            dim=dim,
            views=_prompt_views(prompts),
            max_length=int(seq) if seq else None,
            batch_size=batch_size,
            device=str(model.device),
        )
        encoder.info = replace(encoder.info, model_id=name)
        encoder._model = model
        return encoder

    def place(self, device: str) -> None:
        """Run on ``device`` (a resolved torch device); a model already loaded is moved."""
        self.device = device
        if self._model is not None:
            self._model.to(device)

    def load(self) -> Any:
        """Load the model once (on :attr:`device`); raise a clear error when it cannot load."""
        if self._model is not None:
            return self._model
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # pragma: no cover - a core dependency
            raise MissingExtraError("sentence-transformers", "encoders", "This encoder") from exc
        local = Path(self.source).exists()
        try:
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        except ImportError:  # pragma: no cover - a dependency of sentence-transformers
            pass
        try:
            model = SentenceTransformer(
                self.source,
                device=self.device,
                trust_remote_code=self.trust_remote_code,
                local_files_only=local or hub_offline(),
            )
        except Exception as exc:
            where = "the folder" if local else "the Hugging Face hub"
            raise EncoderUnavailableError(
                f"could not load encoder {self.info.name!r} ({self.source}) from {where}: "
                f"{type(exc).__name__}: {exc}. Models named by a hub id need network access the "
                "first time they are used (then they load from the Hugging Face cache); offline, "
                "use an encoder whose weights ship in a Python package (embedding-ttc encoders)."
            ) from exc
        got = embedding_dimension(model)
        if got is not None and self.info.dim and got != self.info.dim:
            raise EncoderUnavailableError(
                f"encoder {self.info.name!r} produces {got}-d embeddings, registered as "
                f"{self.info.dim}-d"
            )
        if self.info.max_length is not None:
            model.max_seq_length = self.info.max_length
        self._model = model
        return model

    def forward_batches(self, texts: Sequence[str], view: str) -> list[list[int]]:
        """The positions of ``texts`` grouped as :meth:`encode` batches them (no weights loaded).

        ``SentenceTransformer.encode`` sorts its inputs by character length, longest first
        (``np.argsort`` of the negated lengths), then runs ``batch_size`` at a time; the inputs
        are the texts with the view's prompt prepended. (With flash attention on a GPU it
        interleaves long and short inputs instead; rows then differ from a sharded run's in
        their last float bits only.) A sharded encode (:mod:`embedding_ttc.encoders.sharded`)
        cuts a call between these batches so that every row is computed as in-process.
        """
        spec = self.info.views[check_view(view)]
        prefix = spec.value if spec.kind == "prompt" else ""
        order = np.argsort([-len(prefix + t) for t in texts])
        size = self.batch_size
        return [order[lo : lo + size].tolist() for lo in range(0, len(order), size)]

    def _embed(
        self, texts: list[str], *, adapter: str | None, max_length: int | None
    ) -> NDArray[np.floating]:
        model = self.load()
        kwargs: dict[str, Any] = {"task": adapter} if adapter else {}
        with self._lock:  # max_seq_length is model state; one call at a time
            default = model.max_seq_length
            if max_length is not None:
                model.max_seq_length = max_length
            try:
                out = model.encode(
                    texts,
                    batch_size=self.batch_size,
                    convert_to_numpy=True,
                    normalize_embeddings=False,
                    show_progress_bar=False,
                    **kwargs,
                )
            finally:
                model.max_seq_length = default
        return np.asarray(out, dtype=np.float32)


def _model_type(model: Any) -> str:
    """The transformer's ``model_type`` (``bert``), else ``sentence-transformers``."""
    try:
        return str(model[0].auto_model.config.model_type)
    except (AttributeError, IndexError, KeyError, TypeError):
        return "sentence-transformers"
