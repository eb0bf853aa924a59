"""The learned-head baseline (App. C): a head trained on the discovery tasks, scored at c = 1.

A head is a map ``f`` applied to both the query and the document embeddings of the frozen
encoder, each output L2-normalised, and a query scores a document by the cosine
``f(q)·f(d)``. Four families (App. C):

* ``pca-whitening`` — unsupervised: ``W (x − μ)`` with ``W = U diag((λ + ε)^-½) Uᵀ`` from the
  eigendecomposition of the covariance of the pooled training query and document embeddings
  (ZCA form; PCA whitening differs by a rotation, which the cosine ignores). ``ε`` is
  :data:`WHITENING_EPS` times the mean eigenvalue, so it means the same at every dimension;
* ``linear`` — ``M x`` with ``M`` (d×d) initialised to the identity;
* ``lowrank-64`` — the residual metric ``x + B A x``, ``A``: d→64, ``B``: 64→d, ``B = 0`` at
  the start;
* ``mlp`` — the residual ``x + W₂ gelu(W₁ x + b₁) + b₂``, hidden width d, ``W₂ = b₂ = 0`` at
  the start.

The supervised families are trained with in-batch InfoNCE (van den Oord et al. 2018; each
query's positive document against the other positives of its batch) at temperature 0.05,
AdamW (lr 1e-3, batch 64, a fixed number of epochs), on the pooled (query, positive document)
pairs (grade > 0) of the discovery tasks' training queries. A seeded split holds out 20% of
every discovery task's queries, never trained on; each family's mean nDCG@10 over the tasks'
held-out queries selects the ``chosen`` family. Training is deterministic: initial weights come
from a seeded NumPy generator, batches from a seeded ``torch.Generator``, on one thread with
``torch.use_deterministic_algorithms``.

The trained heads are stored and served as the program ``LearnedHead`` by
:mod:`embedding_ttc.analysis.head_store`.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from embedding_ttc.encoders.base import PASSAGE, QUERY, Encoder
from embedding_ttc.encoders.encode import encode_texts
from embedding_ttc.errors import EmbeddingTTCError, UnknownNameError
from embedding_ttc.evaluation.ranking import TaskRanker
from embedding_ttc.programs.base import Matrix
from embedding_ttc.registry import closest
from embedding_ttc.tasks.task import RetrievalTask

if TYPE_CHECKING:
    import torch

LEARNED_HEAD = "LearnedHead"
"""Program name of the learned-head baseline's cells (trained per encoder, scored at c = 1)."""

HEAD_FAMILIES: tuple[str, ...] = ("pca-whitening", "linear", "lowrank-64", "mlp")
HEADS_DIR = "heads"
HEAD_SCHEMA_VERSION: Literal[1] = 1
LOW_RANK = 64
WHITENING_EPS = 1e-3
"""Whitening's ε, relative to the mean eigenvalue of the covariance."""


class HeadStoreError(EmbeddingTTCError):
    """A learned head is missing or its files do not belong together."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HeadFamily(_Record):
    """One trained head family of a :class:`HeadRecord`."""

    family: str
    parameters: int
    train_seconds: float
    validation_ndcg_at_10: float
    discovery_ndcg_at_10: float | None


class HeadRecord(_Record):
    """``OUT/heads/<encoder>.json``: the learned heads trained for one encoder."""

    schema_version: Literal[1] = HEAD_SCHEMA_VERSION
    kind: Literal["head_training"]
    encoder: str
    chosen: str
    seed: int
    n_train_pairs: int
    n_validation_queries: int
    families: list[HeadFamily]
    tasks: list[str] | None = None
    """The discovery tasks the heads were trained on (``None`` in records that predate it)."""

    def family(self, name: str) -> HeadFamily | None:
        """The family called ``name``, if trained."""
        return next((f for f in self.families if f.family == name), None)


@dataclass(frozen=True)
class HeadConfig:
    """How heads are trained (the paper's settings are the defaults).

    Only ``seed`` and ``families`` are in the record (with the tasks trained on); a stored head
    made with another of them, or on other tasks, is retrained (:meth:`HeadStore.reusable`).
    """

    families: tuple[str, ...] = HEAD_FAMILIES
    seed: int = 0
    epochs: int = 10
    batch_size: int = 64
    lr: float = 1e-3
    weight_decay: float = 0.01
    temperature: float = 0.05
    validation_fraction: float = 0.2

    def __post_init__(self) -> None:
        for f in self.families:
            if f not in HEAD_FAMILIES:
                near = closest(f, list(HEAD_FAMILIES))
                hint = f" Did you mean {near[0]!r}?" if near else ""
                raise UnknownNameError(
                    f"unknown head family {f!r}.{hint} Families: {', '.join(HEAD_FAMILIES)}"
                )
        if not self.families or len(set(self.families)) != len(self.families):
            raise ValueError(f"head families must be distinct and not empty: {self.families}")


# --- the maps -----------------------------------------------------------------------------------


def _map(family: str, w: Mapping[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """``f(x)`` before normalisation (one implementation, for training and for scoring)."""
    import torch

    if family == "pca-whitening":
        return (x - w["mean"]) @ w["W"].T
    if family == "linear":
        return x @ w["M"].T
    if family == "lowrank-64":
        return x + (x @ w["A"].T) @ w["B"].T
    if family == "mlp":
        hidden = torch.nn.functional.gelu(x @ w["W1"].T + w["b1"])
        return x + hidden @ w["W2"].T + w["b2"]
    raise UnknownNameError(f"unknown head family {family!r}; families: {HEAD_FAMILIES}")


@dataclass(frozen=True)
class Head:
    """One family's map with its weights (NumPy, float32)."""

    family: str
    weights: Mapping[str, NDArray[np.float32]]

    @property
    def parameters(self) -> int:
        """Number of trained (or fitted) values."""
        return int(sum(v.size for v in self.weights.values()))

    def transform(self, X: Matrix) -> Matrix:
        """``f(X)`` row by row, L2-normalised (a zero row stays zero); ``X`` is untouched."""
        import torch

        with torch.no_grad():
            w = {k: torch.from_numpy(np.asarray(v, np.float32)) for k, v in self.weights.items()}
            out = _map(self.family, w, torch.from_numpy(np.array(X, np.float32)))
            out = torch.nn.functional.normalize(out, dim=1)
        return np.ascontiguousarray(out.numpy(), dtype=np.float32)


def init_head(family: str, dim: int, seed: int) -> Head:
    """The starting weights of a trained family; the identity map for every one of them.

    ``A`` and ``W₁`` are drawn as PyTorch's ``nn.Linear`` draws them, U(−1/√d, 1/√d).
    """
    rng = np.random.default_rng(seed)
    bound = 1.0 / np.sqrt(dim)

    def uniform(*shape: int) -> NDArray[np.float32]:
        return rng.uniform(-bound, bound, size=shape).astype(np.float32)

    def zeros(*shape: int) -> NDArray[np.float32]:
        return np.zeros(shape, np.float32)

    if family == "linear":
        return Head(family, {"M": np.eye(dim, dtype=np.float32)})
    if family == "lowrank-64":
        return Head(family, {"A": uniform(LOW_RANK, dim), "B": zeros(dim, LOW_RANK)})
    if family == "mlp":
        weights = {"W1": uniform(dim, dim), "b1": uniform(dim), "W2": zeros(dim, dim)}
        return Head(family, {**weights, "b2": zeros(dim)})
    raise ValueError(f"{family!r} is not trained by gradient descent (families: {HEAD_FAMILIES})")


def fit_whitening(X: Matrix) -> Head:
    """PCA (ZCA-form) whitening of the rows of ``X``: ``W (x − μ)``, ``W = U (Λ + ε)^-½ Uᵀ``."""
    data = np.asarray(X, np.float64)
    mean = data.mean(axis=0)
    centred = data - mean
    cov = centred.T @ centred / max(len(data), 1)
    eigvals, eigvecs = np.linalg.eigh(cov)
    eigvals = np.clip(eigvals, 0.0, None)
    eps = WHITENING_EPS * max(float(eigvals.mean()), float(np.finfo(np.float32).tiny))
    W = (eigvecs / np.sqrt(eigvals + eps)) @ eigvecs.T
    return Head("pca-whitening", {"mean": mean.astype(np.float32), "W": W.astype(np.float32)})


@contextmanager
def deterministic_torch() -> Iterator[None]:
    """One thread and deterministic algorithms for the block; the previous settings restored."""
    import torch

    threads, strict = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(strict)
        torch.set_num_threads(threads)


def train_infonce(head: Head, Xq: Matrix, Xd: Matrix, config: HeadConfig) -> Head:
    """Train ``head`` on aligned (query, positive document) rows with in-batch InfoNCE.

    Within a batch, query ``i``'s logits are ``f(q_i)·f(d_j) / τ`` over the batch's documents
    and its target is ``j = i``; a batch of one (no negative) is skipped.
    """
    import torch

    params = {k: torch.tensor(v, requires_grad=True) for k, v in head.weights.items()}
    optim = torch.optim.AdamW(list(params.values()), lr=config.lr, weight_decay=config.weight_decay)
    q = torch.from_numpy(np.asarray(Xq, np.float32))
    d = torch.from_numpy(np.asarray(Xd, np.float32))
    order = torch.Generator().manual_seed(config.seed)
    for _ in range(config.epochs):
        perm = torch.randperm(len(q), generator=order)
        for start in range(0, len(q), config.batch_size):
            idx = perm[start : start + config.batch_size]
            if len(idx) < 2:
                continue
            fq = torch.nn.functional.normalize(_map(head.family, params, q[idx]), dim=1)
            fd = torch.nn.functional.normalize(_map(head.family, params, d[idx]), dim=1)
            logits = fq @ fd.T / config.temperature
            loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(idx)))
            optim.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            optim.step()
    return Head(head.family, {k: v.detach().numpy().copy() for k, v in params.items()})


# --- data ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskEmbeddings:
    """A discovery task with its base embeddings (``Q`` query view, ``D`` passage view)."""

    task: RetrievalTask
    Q: Matrix
    D: Matrix


def embed_tasks(encoder: Encoder, tasks: Iterable[RetrievalTask]) -> list[TaskEmbeddings]:
    """Encode each task exactly as ``run_programs`` does, so the embedding cache serves it."""
    return [
        TaskEmbeddings(
            task,
            Q=encode_texts(encoder, list(task.query_texts), QUERY),
            D=encode_texts(encoder, task.doc_texts, PASSAGE),
        )
        for task in tasks
    ]


def validation_rows(task: RetrievalTask, fraction: float, seed: int) -> NDArray[np.intp]:
    """The held-out query rows of ``task``, drawn with a seed of (``seed``, task name).

    ``round(fraction · n)`` of the ``n`` queries, and at least one when there are two or more.
    """
    n = task.n_queries
    k = min(max(round(fraction * n), 1 if n >= 2 else 0), n)
    digest = hashlib.blake2b(f"{seed}\0{task.name}".encode(), digest_size=8).digest()
    rng = np.random.default_rng(int.from_bytes(digest, "little"))
    return np.sort(rng.permutation(n)[:k]).astype(np.intp)


def training_pairs(
    data: Sequence[TaskEmbeddings], held_out: Sequence[NDArray[np.intp]]
) -> tuple[Matrix, Matrix]:
    """Aligned (query, positive document) rows of every task's training queries (grade > 0)."""
    qs: list[Matrix] = []
    ds: list[Matrix] = []
    for te, val in zip(data, held_out, strict=True):
        index = {d: i for i, d in enumerate(te.task.doc_ids)}
        skip = set(val.tolist())
        rows, cols = [], []
        for row, qid in enumerate(te.task.query_ids):
            if row in skip:
                continue
            for doc, grade in te.task.qrels.get(qid, {}).items():
                if grade > 0 and doc in index:
                    rows.append(row)
                    cols.append(index[doc])
        qs.append(te.Q[rows])
        ds.append(te.D[cols])
    dim = data[0].Q.shape[1] if data else 0
    if not qs:
        return np.zeros((0, dim), np.float32), np.zeros((0, dim), np.float32)
    return np.concatenate(qs), np.concatenate(ds)


def task_ndcg(head: Head | None, te: TaskEmbeddings) -> NDArray[np.float64]:
    """Per-query nDCG@10 of ``te`` scored by ``head`` (``None``: P0), under the task's rules."""
    Q, D = (te.Q, te.D) if head is None else (head.transform(te.Q), head.transform(te.D))
    return TaskRanker(te.task).ndcg(Q @ D.T)


# --- training and selection ---------------------------------------------------------------------


@dataclass(frozen=True)
class TrainedHeads:
    """The record of one encoder's heads with every family's weights."""

    record: HeadRecord
    heads: Mapping[str, Head] = field(default_factory=dict)

    @property
    def chosen(self) -> Head:
        """The head of the chosen family."""
        return self.heads[self.record.chosen]


def select_family(families: Sequence[HeadFamily]) -> str:
    """The family with the highest validation nDCG@10; a tie goes to the one listed first."""
    if not families:
        raise ValueError("no head family to select from")
    best = max(range(len(families)), key=lambda i: (families[i].validation_ndcg_at_10, -i))
    return families[best].family


def _fit(family: str, Xq: Matrix, Xd: Matrix, config: HeadConfig) -> Head:
    if family == "pca-whitening":
        return fit_whitening(np.concatenate([Xq, Xd]))
    return train_infonce(init_head(family, Xq.shape[1], config.seed), Xq, Xd, config)


def train_heads(
    encoder: str, data: Sequence[TaskEmbeddings], config: HeadConfig | None = None
) -> TrainedHeads:
    """Train every family of ``config`` on ``data`` (the discovery tasks), select one, record.

    ``validation_ndcg_at_10`` is the mean over tasks of the mean nDCG@10 of each task's held-out
    queries (tasks without one are left out); ``discovery_ndcg_at_10`` the mean over tasks of
    the mean over all their queries (training queries included), each ranking as the task's
    cells do (the whole corpus, or the query's pool).
    """
    config = config or HeadConfig()
    if not data:
        raise ValueError("learned heads need at least one discovery task")
    held_out = [validation_rows(te.task, config.validation_fraction, config.seed) for te in data]
    Xq, Xd = training_pairs(data, held_out)
    if len(Xq) == 0:
        raise ValueError("the discovery tasks' training queries have no positive judgement")
    heads: dict[str, Head] = {}
    families: list[HeadFamily] = []
    with deterministic_torch():
        for family in config.families:
            start = time.perf_counter()
            head = _fit(family, Xq, Xd, config)
            seconds = time.perf_counter() - start
            per_task = [task_ndcg(head, te) for te in data]
            val = [float(s[v].mean()) for s, v in zip(per_task, held_out, strict=True) if v.size]
            heads[family] = head
            families.append(
                HeadFamily(
                    family=family,
                    parameters=head.parameters,
                    train_seconds=seconds,
                    validation_ndcg_at_10=float(np.mean(val)) if val else 0.0,
                    discovery_ndcg_at_10=float(np.mean([s.mean() for s in per_task])),
                )
            )
    record = HeadRecord(
        kind="head_training",
        encoder=encoder,
        chosen=select_family(families),
        seed=config.seed,
        n_train_pairs=len(Xq),
        n_validation_queries=int(sum(v.size for v in held_out)),
        families=families,
        tasks=[te.task.name for te in data],
    )
    return TrainedHeads(record, heads)
