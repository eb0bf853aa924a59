"""What one sandboxed call may use, and the environment its child starts with."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from embedding_ttc.programs.primitives.tokenizers import TOKENIZER_ENV, tokenizer_name

TimeoutCovers = Literal["run", "program"]
TIMEOUT_COVERS: tuple[str, ...] = get_args(TimeoutCovers)

DEFAULT_WALL_SECONDS = 3600.0
"""``--timeout``: an hour per program per task, the whole run (encodes served included).

The slowest library cell recorded (CoverageTriple on scifact, MiniLM, in ``results/transfer``)
took 2,148 s, 2,143 of them encoding sentences, pairs and paragraphs with a cold cache on one
loaded core; its algebra took 5 s. An hour leaves 1.7 times that, and is less than the
600 s + 3,600 s of encoding a run could take before the encodes served were counted.
"""

DEFAULT_ENCODE_TEXTS_PER_ITEM = 112.0
"""``--encode-budget``: texts per query and document, twice the most the library asks.

The most expensive library programs ask for 52.7 texts per query and document
(LexicalHybridRRF and CrossRoundRRF on AILA case documents, whose long documents split into
many sentences, pairs and paragraphs: ``results/transfer``); on the packaged tasks the most is
9.3 (``benchmarks/encode_budget.py``, which measures both). 52.7 × 2, rounded up to a multiple
of 8, is 112: room for a call whose documents are longer than the task's average (a shortlist
batch) and for a program twice as thorough as the library's, and less than half the 256
allowed before the budget was measured.
"""

PIECE_SECONDS = 0.5
"""The encoding time the parent aims each piece of a request at (see :data:`SERVE_PIECE`)."""

SERVE_PIECE = (16, 4096)
"""The fewest and the most texts the parent encodes for the child between two looks at the
deadline: the first piece of a call has the fewest, each later one as many as take about
:data:`PIECE_SECONDS` at the rate of the last (a warm cache serves thousands a second, a
busy CPU encodes tens)."""


@dataclass(frozen=True)
class SandboxLimits:
    """What one sandboxed call may use.

    Attributes:
        wall_seconds: wall time of the whole run, from the child's start to its result,
            the time the parent spends serving its encoder requests included (``--timeout``).
            A run is one call, or every call of a program on a task in an evaluator's
            shortlist batches (:mod:`~embedding_ttc.evaluation.run_scope`).
            Exceeded: the group is killed, ``timeout``, with a reason that splits the time
            between the program and the encodes served for it. The parent checks it before
            every encoder request and between pieces of a request sized to take about
            :data:`PIECE_SECONDS`, so a call ends about one piece's encoding after its limit.
        timeout_covers: what ``wall_seconds`` counts: ``"run"`` (the program and the encodes
            served for it), or ``"program"``, the rule before encodes were counted (the
            child's wall time minus the parent's serving), kept so that a search recorded
            under it resumes under it.
        memory_bytes: ``RLIMIT_AS`` of the child: its whole address space, interpreter and
            numpy included (about 150 MB before the program starts; more with scipy or many
            BLAS threads). Exceeded: ``MemoryError`` in the program, ``memory``.
        output_bytes: stdout and stderr the child may print together; beyond, it is killed
            (``crashed``).
        cpu_seconds: ``RLIMIT_CPU`` (all threads together); ``None``: ``wall_seconds`` times
            the number of BLAS threads, plus 5. Exceeded: ``SIGXCPU``, ``timeout``.
        message_bytes: the largest encoder request the parent reads from the child (the texts
            as JSON); a larger announced message kills the child (``crashed``).
        open_files: ``RLIMIT_NOFILE`` of the child.
        threads: BLAS / OpenMP threads in the child; ``None``: the parent's
            ``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS``, else 1.
        isolate_network: put the child in an empty network namespace when permitted.
        drop_privileges: when the parent is root, run the program as ``nobody``.
        encode_texts_per_item: the encoder budget in texts, per query and document of the
            call: a call over |Q| queries and |D| documents may have the parent encode at most
            ``encode_texts_per_item * (|Q| + |D|)`` texts. The library's most expensive
            program asks for about 53 (LexicalHybridRRF's sentence, pair, paragraph and topic
            channels on the long AILA case documents, in the discovery cells of
            ``results/transfer``); the default, :data:`DEFAULT_ENCODE_TEXTS_PER_ITEM`, leaves
            room for new programs and stops a flood. Exceeded: the child is killed,
            ``budget``.
        encode_seconds: the encoder budget in seconds the parent spends serving the child's
            requests (cache hits included). Exceeded: killed, ``budget``. It binds only when
            it is below ``wall_seconds`` or ``timeout_covers`` is ``"program"``.

    """

    wall_seconds: float = DEFAULT_WALL_SECONDS
    memory_bytes: int = 8 * 2**30
    output_bytes: int = 1 << 20
    cpu_seconds: float | None = None
    message_bytes: int = 1 << 30
    open_files: int = 64
    threads: int | None = None
    isolate_network: bool = True
    drop_privileges: bool = True
    encode_texts_per_item: float = DEFAULT_ENCODE_TEXTS_PER_ITEM
    encode_seconds: float = 3600.0
    timeout_covers: TimeoutCovers = "run"

    def encode_text_budget(self, n_queries: int, n_docs: int) -> int:
        """Texts the parent encodes for one call over ``n_queries`` × ``n_docs`` at most."""
        return int(self.encode_texts_per_item * (n_queries + n_docs))

    def __post_init__(self) -> None:
        positive = {
            "wall_seconds": self.wall_seconds,
            "memory_bytes": self.memory_bytes,
            "output_bytes": self.output_bytes,
            "message_bytes": self.message_bytes,
            "open_files": self.open_files,
            "encode_texts_per_item": self.encode_texts_per_item,
            "encode_seconds": self.encode_seconds,
        }
        if self.cpu_seconds is not None:
            positive["cpu_seconds"] = self.cpu_seconds
        if self.threads is not None:
            positive["threads"] = self.threads
        for name, value in positive.items():
            if not value > 0:
                raise ValueError(f"SandboxLimits.{name} must be positive, got {value!r}")
        if self.timeout_covers not in TIMEOUT_COVERS:
            raise ValueError(
                f"SandboxLimits.timeout_covers must be one of {', '.join(TIMEOUT_COVERS)}, "
                f"got {self.timeout_covers!r}"
            )


DEFAULT_LIMITS = SandboxLimits()


def _threads(limits: SandboxLimits) -> dict[str, str]:
    if limits.threads is not None:
        n = str(limits.threads)
        return {"OMP_NUM_THREADS": n, "OPENBLAS_NUM_THREADS": n, "MKL_NUM_THREADS": n}
    omp = os.environ.get("OMP_NUM_THREADS") or "1"
    return {
        "OMP_NUM_THREADS": omp,
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS") or omp,
        "MKL_NUM_THREADS": os.environ.get("MKL_NUM_THREADS") or omp,
    }


KERNEL_ENV: tuple[str, ...] = (
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "MKL_CBWR",
    "MKL_ENABLE_INSTRUCTIONS",
    "NPY_DISABLE_CPU_FEATURES",
    "NPY_ENABLE_CPU_FEATURES",
)
"""Variables that choose the numeric kernels (OpenBLAS's core type and cache size, MKL's
reproducibility mode and instruction set, numpy's SIMD dispatch), passed to the child as the
parent has them. A machine that pins OpenBLAS to its Haswell kernels on an AVX-512 CPU
(``OPENBLAS_CORETYPE=Haswell``) would otherwise run the child on the SkylakeX kernels, whose
float32 products differ in the last bit: a program would score differently sandboxed than in
process, where the deployed reranker runs it."""


LIBRARY_ROOT = str(Path(__file__).resolve().parents[3])
"""The folder holding the ``embedding_ttc`` package this process runs (this module is
``embedding_ttc/program_files/sandbox/limits.py`` in it)."""


def _kernels() -> dict[str, str]:
    return {name: os.environ[name] for name in KERNEL_ENV if name in os.environ}


def child_env(limits: SandboxLimits, workdir: str) -> dict[str, str]:
    """The child's whole environment: of the parent's, only the choice of :data:`KERNEL_ENV`."""
    return {
        "PATH": os.defpath,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": workdir,
        "TMPDIR": workdir,
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        # The parent's active tokenizer (a use_tokenizer block included), so that a sandboxed
        # program's lexical channels tokenise as the evaluation around it does.
        TOKENIZER_ENV: tokenizer_name(),
        # The library the parent runs, first on the child's path: an installed copy elsewhere
        # (an editable install of another checkout) would give the child other primitives, and
        # a served program other scores than its parent computes.
        "PYTHONPATH": LIBRARY_ROOT,
        **_threads(limits),
        **_kernels(),
    }


def cpu_limit(limits: SandboxLimits) -> float:
    """The child's ``RLIMIT_CPU`` in seconds (see :attr:`SandboxLimits.cpu_seconds`)."""
    if limits.cpu_seconds is not None:
        return limits.cpu_seconds
    try:
        threads = max(int(_threads(limits)["OPENBLAS_NUM_THREADS"]), 1)
    except ValueError:
        threads = 1
    return limits.wall_seconds * threads + 5.0
