"""The sentence-transformers folder the ONNX backend runs: its modules, sources and pooling.

The backend reproduces a folder of the form Transformer -> Pooling [-> Normalize]: the
transformer runs in ONNX Runtime (:mod:`~embedding_ttc.encoders.onnx_export`), and tokenisation
(the model's own tokenizer), pooling (the mode read from the Pooling module's ``config.json``,
computed by :func:`pool`) and normalisation run around it in numpy, exactly as the
sentence-transformers modules compute them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.errors import EncoderUnavailableError

# sentence-transformers' legacy boolean keys, in the order its Pooling module concatenates modes.
_LEGACY_POOLING = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
_POOLING_MODES = ("cls", "max", "mean", "mean_sqrt_len_tokens", "lasttoken")
# Files of a transformer folder that decide its outputs (the weights: safetensors if present).
_SOURCE_NAMES = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "sentencepiece.bpe.model",
    "spiece.model",
    "sentence_bert_config.json",
)


@dataclass(frozen=True)
class Pipeline:
    """A sentence-transformers folder of the form Transformer -> Pooling [-> Normalize].

    Attributes:
        folder: the sentence-transformers folder (``modules.json``).
        transformer: the Transformer module's folder (weights, config, tokenizer).
        pooling: pooling modes, in sentence-transformers' concatenation order.
        normalize: whether a Normalize module ends the pipeline.
        max_seq_length: the Transformer module's token budget, if its config sets one.

    """

    folder: Path
    transformer: Path
    pooling: tuple[str, ...]
    normalize: bool
    max_seq_length: int | None

    def source_files(self) -> list[Path]:
        """The files whose contents decide the embeddings (hashed into the manifest)."""
        names = [self.transformer / n for n in _SOURCE_NAMES]
        weights = self.transformer / "model.safetensors"
        if not weights.exists():
            weights = self.transformer / "pytorch_model.bin"
        extra = [weights, self.folder / "modules.json", *self._pooling_configs()]
        return sorted({p for p in [*names, *extra] if p.is_file()})

    def _pooling_configs(self) -> list[Path]:
        modules = json.loads((self.folder / "modules.json").read_text(encoding="utf-8"))
        return [self.folder / m["path"] / "config.json" for m in modules if m["path"]]


def _pooling_modes(config: dict[str, Any]) -> tuple[str, ...]:
    if "pooling_mode" in config:
        mode = config["pooling_mode"]
        return (mode,) if isinstance(mode, str) else tuple(mode)
    return tuple(m for key, m in _LEGACY_POOLING.items() if config.get(key)) or ("mean",)


def read_pipeline(folder: Path) -> Pipeline:
    """Read ``modules.json`` and the module configs of a sentence-transformers folder.

    Raises:
        EncoderUnavailableError: the folder is not Transformer -> Pooling [-> Normalize], or
            uses a pooling mode or setting this backend does not reproduce.

    """
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        kinds = [str(m["type"]).rsplit(".", 1)[-1] for m in modules]
        if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
            raise ValueError(f"modules {kinds}, expected Transformer, Pooling[, Normalize]")
        transformer = folder / modules[0]["path"]
        pooling_cfg = json.loads((folder / modules[1]["path"] / "config.json").read_text())
        st_file = transformer / "sentence_bert_config.json"
        st_cfg = json.loads(st_file.read_text()) if st_file.exists() else {}
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise EncoderUnavailableError(
            f"the onnx-int8 backend cannot read the sentence-transformers folder {folder}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    modes = _pooling_modes(pooling_cfg)
    unsupported = [m for m in modes if m not in _POOLING_MODES]
    if unsupported or st_cfg.get("do_lower_case"):
        what = f"pooling {unsupported}" if unsupported else "do_lower_case"
        raise EncoderUnavailableError(
            f"the onnx-int8 backend does not reproduce {what} (folder {folder})"
        )
    max_seq = st_cfg.get("max_seq_length")
    return Pipeline(
        folder=folder,
        transformer=transformer,
        pooling=modes,
        normalize=len(modules) == 3,
        max_seq_length=int(max_seq) if max_seq else None,
    )


def pool(
    hidden: NDArray[np.float32], mask: NDArray[np.int64], modes: Sequence[str]
) -> NDArray[np.float32]:
    """Sentence vectors from token vectors, as sentence-transformers' Pooling module makes them.

    Rows are right-padded (``mask`` is 1 on real tokens, then 0). ``mean`` divides the masked sum
    by the token count clamped at 1e-9; ``cls`` takes the first real token; ``lasttoken`` the
    last one; ``max`` the masked maximum. Several modes concatenate in the given order.
    """
    m = mask[..., None].astype(hidden.dtype)
    rows = np.arange(hidden.shape[0])
    lengths = mask.sum(axis=1)
    out: list[NDArray[np.float32]] = []
    for mode in modes:
        if mode == "cls":
            out.append(hidden[rows, mask.argmax(axis=1)])
        elif mode == "lasttoken":
            out.append(hidden[rows, np.maximum(lengths - 1, 0)] * (lengths > 0)[:, None])
        elif mode == "max":
            out.append(np.where(m > 0, hidden, -np.inf).max(axis=1).astype(np.float32))
        else:  # mean, mean_sqrt_len_tokens
            count = np.maximum(m.sum(axis=1), 1e-9)
            total = (hidden * m).sum(axis=1)
            out.append(total / (count if mode == "mean" else np.sqrt(count)))
    return np.concatenate(out, axis=1).astype(np.float32, copy=False)
