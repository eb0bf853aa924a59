"""The ONNX export of a sentence-transformers folder: traced once, MatMul weights in int8.

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
  as the sentence-transformers modules compute them
  (:mod:`~embedding_ttc.encoders.onnx_pipeline`).

Artifacts live in ``<embedding cache>/onnx/<model>-<revision>-<build id>/``: ``model.fp32.onnx``,
``model.int8.onnx`` and ``manifest.json`` (the onnxruntime / onnx / torch / transformers
versions and the sha256 of every source file and artifact). The build id hashes the recipe and
those versions, so it changes whenever the exported graph could. A folder is built in a temporary
folder beside it and renamed into place under a file lock (:mod:`embedding_ttc.durable`); one
whose manifest is missing or does not match the source files or its artifacts is rebuilt, never
loaded.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import inspect
import json
import logging
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from embedding_ttc.durable import (
    file_lock,
    fsync_file,
    publish_dir,
    sha256_file,
    staging_dir,
    write_atomic,
)
from embedding_ttc.encoders.onnx_pipeline import Pipeline
from embedding_ttc.errors import EncoderUnavailableError, MissingExtraError

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
    got = open_session(path, 1).run([OUTPUT], {n: probe[n].numpy() for n in names})[0]
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
        fsync_file(out / name)
        artifacts[name] = sha256_file(out / name)
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
    write_atomic(out / MANIFEST, json.dumps(manifest, indent=2) + "\n")


def source_digests(pipeline: Pipeline) -> dict[str, str]:
    """sha256 of each source file, keyed by its path relative to the folder."""
    return {str(p.relative_to(pipeline.folder)): sha256_file(p) for p in pipeline.source_files()}


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
            and sha256_file(folder / artifact) == manifest["artifacts"][artifact]
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
    with file_lock(target):
        manifest = read_manifest(target, sources, versions, artifact)
        if manifest is not None:  # another process built it while we waited
            return manifest
        with staging_dir(target) as tmp:
            build_export(pipeline, tmp, sources, versions)
            publish_dir(tmp, target)  # swaps out an invalid folder, if there was one
    manifest = read_manifest(target, sources, versions, artifact)
    if manifest is None:  # pragma: no cover - only if the disk changes under us
        raise EncoderUnavailableError(f"the ONNX export in {target} did not validate")
    return manifest


def open_session(path: Path, threads: int) -> Any:
    """An ONNX Runtime CPU session on ``threads`` intra-op threads, run sequentially."""
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
