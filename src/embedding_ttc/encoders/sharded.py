"""An encoder that splits each call into shards and encodes them as Ray tasks.

``index build --executor ray`` passes a :class:`ShardedEncoder` to the ordinary build as its
encoder: every ``encode`` call is cut into shards of at most ``shard_size`` texts, each shard
is one job of an :class:`~embedding_ttc.executors.Executor` (one Ray task), and a worker loads
the encoder by name (:class:`~embedding_ttc.encoders.named.NamedEncoder`, once per worker
process) and encodes it. The rows come back in the caller's order.

The shards reproduce the rows of an in-process call bit for bit, because they never change
which texts share a forward batch (a transformer's padding and batch size change the last
float bits of a row: MiniLM rows differ by up to ~1e-7 between batchings). How a call may be
cut is the encoder's to say, without loading its weights:

* an encoder that declares its forward batches (:class:`ForwardBatches`: the
  sentence-transformers models) is cut between batches, and the worker encodes each batch by
  a call of its own, which runs exactly that batch;
* an encoder whose rows depend on their own text only (:func:`rows_independent`: the static
  models) is cut anywhere;
* any other encoder is not cut: the whole call is one task (exact, but not parallel within a
  call).

The thread count matters as well: a matrix product of a few rows can round differently with
one intra-op thread than with two (MiniLM rows of a three-query batch differ by ~1e-7 between
``torch.set_num_threads(1)`` and ``(2)`` on an Intel Xeon; a 60-row batch does not), and Ray
starts each task with ``OMP_NUM_THREADS`` set to its CPUs. So every task runs with the
driver's torch intra-op threads (:func:`task_threads`: ``--threads``, else torch's default,
which is what an in-process build on the driver uses), and reserves that many CPUs, at most a
node's (:func:`shard_cpus`), so that tasks do not oversubscribe a node.

The embedding cache belongs *above* this wrapper, in the driver
(``CachedEncoder(ShardedEncoder(...))``): hits never leave the driver, only misses travel to
Ray, and only the driver writes entries, so workers need neither the cache directory nor a
store that is safe across machines. Workers load their encoder without the cache.

A task that fails (a worker lost, an encoder that does not load there) raises
:class:`~embedding_ttc.errors.EncoderUnavailableError` naming the shard; the shards still
running are cancelled (and waited for). Whatever the caller had already stored (cache blocks of
earlier calls) is kept, and a build publishes nothing until it has finished.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import replace
from typing import Any, Protocol, runtime_checkable

import numpy as np

from embedding_ttc.encoders.base import Embeddings, Encoder, EncoderInfo, check_dim, check_view
from embedding_ttc.encoders.named import NamedEncoder, worker_encoder
from embedding_ttc.encoders.threads import set_torch_threads, torch_threads
from embedding_ttc.errors import EmbeddingTTCError, EncoderUnavailableError
from embedding_ttc.executors import Executor, Lost, RayExecutor, ray_session

DEFAULT_SHARD_SIZE = 64
"""Texts per Ray task: a build's calls hold 256 texts (four tasks each), a static model's
calls many more."""

Group = list[int]
"""Positions in a call whose rows are computed together (one forward batch)."""
Shard = list[Group]
"""The groups one Ray task encodes, each by a call of its own."""


@runtime_checkable
class ForwardBatches(Protocol):
    """An encoder that can say how one ``encode`` call groups its texts into forward batches."""

    def forward_batches(self, texts: Sequence[str], view: str) -> list[Group]:
        """The positions of ``texts`` grouped as ``encode(texts, view=view)`` batches them.

        A row depends only on the texts of its group, so encoding each group by a call of its
        own gives the same rows. Computed without loading any weights.
        """
        ...


def rows_independent(encoder: object) -> bool:
    """Whether ``encoder``'s row for a text depends on that text alone (not on its batch)."""
    return bool(getattr(encoder, "independent_rows", False))


def plan_shards(plan: object, texts: Sequence[str], view: str, shard_size: int) -> list[Shard]:
    """Cut one call into shards of at most ``shard_size`` texts that keep its batches whole.

    Args:
        plan: the encoder (loaded lazily: only its batching is asked).
        texts: the call's texts.
        view: the call's view (a prompt changes text lengths, hence a length-sorted batching).
        shard_size: most texts per shard (a forward batch larger than it is a shard alone).

    """
    if shard_size < 1:
        raise ValueError(f"shard_size is at least 1, got {shard_size}")
    n = len(texts)
    if rows_independent(plan):
        return [[list(range(lo, min(lo + shard_size, n)))] for lo in range(0, n, shard_size)]
    if not isinstance(plan, ForwardBatches):
        return [[list(range(n))]] if n else []
    shards: list[Shard] = []
    current: Shard = []
    size = 0
    for group in plan.forward_batches(texts, view):
        if current and size + len(group) > shard_size:
            shards.append(current)
            current, size = [], 0
        current.append(list(group))
        size += len(group)
    if current:
        shards.append(current)
    return shards


def task_threads(threads: int | None = None) -> int | None:
    """The intra-op threads a task encodes with: ``threads``, else the driver's torch threads.

    ``None`` when torch is not installed (an encoder without torch ignores threads).

    Raises:
        ValueError: ``threads`` is below 1.

    """
    if threads is not None:
        if threads < 1:
            raise ValueError(f"threads is at least 1, got {threads}")
        return threads
    return torch_threads()


def _largest_node_cpus(ray: Any) -> float:
    """CPUs of the largest live node of the Ray cluster (1 when Ray reports none)."""
    cpus = [n.get("Resources", {}).get("CPU", 0.0) for n in ray.nodes() if n.get("Alive", True)]
    return max([c for c in cpus if c > 0], default=1.0)


def shard_cpus(ray: Any, threads: int | None) -> float:
    """CPUs a shard's task reserves: its ``threads``, at most the largest node's (1 without)."""
    wanted = float(threads) if threads else 1.0
    return min(wanted, _largest_node_cpus(ray))


def encode_shard(
    named: NamedEncoder,
    groups: list[list[str]],
    view: str,
    dim: int | None,
    max_length: int | None,
    threads: int | None = None,
) -> Embeddings:
    """Encode one shard: each group by a call of its own, rows in order.

    ``threads``: torch's intra-op threads for the task (the driver's, :func:`task_threads`).
    """
    set_torch_threads(threads)
    encoder = worker_encoder(named)
    parts = [encoder.encode(g, view=view, dim=dim, max_length=max_length) for g in groups]
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def _shard_work(
    groups: list[list[str]],
    named: NamedEncoder,
    view: str,
    dim: int | None,
    max_length: int | None,
    threads: int | None,
) -> Iterator[Embeddings]:
    """The work of one shard's job, wherever it runs: its rows."""
    yield encode_shard(named, groups, view, dim, max_length, threads)


class ShardedEncoder:
    """Encode each call as jobs of at most ``shard_size`` texts (module docstring).

    Args:
        executor: where the shards run (a :class:`~embedding_ttc.executors.RayExecutor`
            whose ``cpus_per_job`` is :func:`shard_cpus`).
        named: the encoder each worker loads (``use_cache`` off: the cache sits above this).
        plan: the same encoder in this process, not loaded: its info, and how it batches.
        shard_size: most texts per job.
        threads: torch intra-op threads of each job (default: :func:`task_threads`, the
            driver's).

    """

    def __init__(
        self,
        executor: Executor,
        named: NamedEncoder,
        plan: Encoder,
        shard_size: int = DEFAULT_SHARD_SIZE,
        threads: int | None = None,
    ) -> None:
        if shard_size < 1:
            raise ValueError(f"shard_size is at least 1, got {shard_size}")
        self.executor = executor
        self.named = named
        self.plan = plan
        self.shard_size = shard_size
        self.threads = task_threads(threads)
        self.tasks = 0  # jobs submitted (Ray tasks), for reports and tests

    @property
    def info(self) -> EncoderInfo:
        """The encoder's info (from the unloaded encoder in this process)."""
        return self.plan.info

    def encode(
        self,
        texts: Sequence[str],
        *,
        view: str,
        dim: int | None = None,
        max_length: int | None = None,
    ) -> Embeddings:
        """Submit every shard of the call, then gather the rows in the caller's order.

        Raises:
            EncoderUnavailableError: a shard's task failed (a worker lost, an encoder that
                does not load there); the shards still running are cancelled.

        """
        check_view(view)
        width = check_dim(dim, self.info.dim)
        if isinstance(texts, str):
            raise TypeError("texts must be a sequence of strings, not a single string")
        shards = plan_shards(self.plan, texts, view, self.shard_size)
        if not shards:
            return np.zeros((0, width), dtype=np.float32)
        jobs = [[[texts[i] for i in g] for g in shard] for shard in shards]
        shared = (self.named, view, dim, max_length, self.threads)
        results = self.executor.map(_shard_work, jobs, ordered=True, shared=shared)
        self.tasks += len(jobs)
        out = np.empty((len(texts), width), dtype=np.float32)
        with closing(results):
            for number, (shard, (_, rows)) in enumerate(zip(shards, results, strict=True), 1):
                if isinstance(rows, Lost):
                    size = sum(len(g) for g in shard)
                    raise EncoderUnavailableError(
                        f"Ray could not encode shard {number} of {len(shards)} ({size} texts) "
                        f"with {self.named.name}: {rows.reason}"
                    )
                out[[i for g in shard for i in g]] = rows
        return out


PURPOSE = "index build --executor ray"


@contextmanager
def sharded_encoder(
    named: NamedEncoder,
    *,
    shard_size: int = DEFAULT_SHARD_SIZE,
    address: str | None = None,
    num_cpus: int | None = None,
    init_options: Mapping[str, Any] | None = None,
    threads: int | None = None,
) -> Iterator[Encoder]:
    """``named`` encoded as Ray tasks for the block, under the driver's cache if it has one.

    Args:
        named: the encoder, its backend, device and cache settings (workers load it without
            the cache; the cache, unless ``use_cache`` is off, wraps the sharded encoder here).
        shard_size: most texts per Ray task.
        address: the Ray cluster (``None``: ``RAY_ADDRESS``, else a local Ray for the block).
        num_cpus: CPUs of a local Ray started here (``None``: all).
        init_options: further ``ray.init`` keyword arguments.
        threads: torch intra-op threads of each task (default: the driver's).

    Raises:
        MissingExtraError: Ray is not installed (the ``ray`` extra).
        UnknownNameError: the encoder or its backend is not registered.

    """
    from embedding_ttc.encoders.cache import CachedEncoder
    from embedding_ttc.encoders.catalog import load_encoder
    from embedding_ttc.encoders.device import check_device

    if shard_size < 1:
        raise EmbeddingTTCError(f"--shard-size must be at least 1, got {shard_size}")
    check_device(named.device)  # resolved by each worker; a misspelt one fails here
    # The driver's copy is never loaded: it gives the encoder's info and its batching. It is
    # placed on the CPU so that a driver without the workers' GPU can still plan.
    plan = load_encoder(named.name, named.backend, "cpu")
    threads = task_threads(threads)
    with ray_session(PURPOSE, address=address, num_cpus=num_cpus, init_options=init_options) as ray:
        executor = RayExecutor(cpus_per_job=shard_cpus(ray, threads), purpose=PURPOSE)
        with executor.open():  # the objects put are kept between calls
            sharded = ShardedEncoder(
                executor, replace(named, use_cache=False), plan, shard_size, threads=threads
            )
            yield CachedEncoder(sharded, named.cache_dir) if named.use_cache else sharded
