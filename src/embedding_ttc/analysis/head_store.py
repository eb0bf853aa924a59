"""Learned heads on disk and as a program of the transfer matrix.

Layout of a :class:`HeadStore`::

    OUT/heads/<encoder>.json   the HeadRecord (read by the report's training-time panel)
    OUT/heads/<encoder>.npz    every family's weights, with the record they belong to (read
                               only when a LearnedHead cell of that encoder is to compute)

In the transfer matrix the chosen head is the program ``LearnedHead`` (:class:`HeadProgram`):
it spends no encoder call, so its cost ratio is 1. :func:`prepare_heads` trains (or reuses)
the head of every encoder with such cells before the matrix runs.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import ValidationError

from embedding_ttc.analysis.cells import CellKey, CellStore
from embedding_ttc.analysis.heads import (
    HEADS_DIR,
    LEARNED_HEAD,
    Head,
    HeadConfig,
    HeadRecord,
    HeadStoreError,
    TaskEmbeddings,
    TrainedHeads,
    train_heads,
)
from embedding_ttc.durable import write_atomic
from embedding_ttc.evaluation.output import safe_name
from embedding_ttc.programs.base import Context, Matrix


class HeadStore:
    """Learned heads on disk under ``root/heads``, one record and one weights file per encoder."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.dir = self.root / HEADS_DIR

    def record_path(self, encoder: str) -> Path:
        """Where ``encoder``'s record lives."""
        return self.dir / f"{safe_name(encoder)}.json"

    def weights_path(self, encoder: str) -> Path:
        """Where ``encoder``'s weights live."""
        return self.dir / f"{safe_name(encoder)}.npz"

    def write(self, trained: TrainedHeads) -> Path:
        """Write the weights, then the record, each atomically; returns the record's path.

        The weights file carries its record's JSON, so a record and weights from two different
        trainings (an interrupted write) are told apart on load.
        """
        self.dir.mkdir(parents=True, exist_ok=True)
        text = trained.record.model_dump_json(indent=1) + "\n"
        arrays: dict[str, Any] = {"record": np.array(text)}
        for family, head in trained.heads.items():
            arrays.update({f"{family}/{k}": v for k, v in head.weights.items()})
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        write_atomic(self.weights_path(trained.record.encoder), buffer.getvalue())
        write_atomic(self.record_path(trained.record.encoder), text)
        return self.record_path(trained.record.encoder)

    def load(self, encoder: str) -> TrainedHeads:
        """Read ``encoder``'s record and weights.

        Raises:
            HeadStoreError: when either file is absent, malformed or belongs to another
                training.

        """
        rpath, wpath = self.record_path(encoder), self.weights_path(encoder)
        if not rpath.is_file() or not wpath.is_file():
            raise HeadStoreError(
                f"no learned head for {encoder} under {self.dir}: run `embedding-ttc transfer` "
                f"with --heads (or {LEARNED_HEAD} in --programs)"
            )
        text = rpath.read_text(encoding="utf-8")
        try:
            record = HeadRecord.model_validate_json(text)
        except ValidationError as exc:
            raise HeadStoreError(f"{rpath} is not a head_training record: {exc}") from None
        with np.load(wpath, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        if str(arrays.pop("record", "")) != text:
            raise HeadStoreError(f"{wpath} holds the weights of another training than {rpath}")
        weights: dict[str, dict[str, NDArray[np.float32]]] = {}
        for key, value in arrays.items():
            family, _, name = key.partition("/")
            weights.setdefault(family, {})[name] = value.astype(np.float32)
        heads = {family: Head(family, w) for family, w in weights.items()}
        if record.encoder != encoder or set(heads) != {f.family for f in record.families}:
            raise HeadStoreError(f"{rpath} and {wpath} do not hold {encoder}'s trained families")
        return TrainedHeads(record, heads)

    def reusable(
        self, encoder: str, config: HeadConfig, tasks: Sequence[str] | None = None
    ) -> TrainedHeads | None:
        """The stored heads if trained with ``config``'s seed and families (and on ``tasks``).

        ``tasks=None`` accepts heads trained on any tasks.
        """
        try:
            trained = self.load(encoder)
        except HeadStoreError:
            return None
        return trained if _trained_as(trained.record, config, tasks) else None

    def matching_record(
        self, encoder: str, config: HeadConfig, tasks: Sequence[str] | None = None
    ) -> HeadRecord | None:
        """``encoder``'s stored record if trained as :meth:`reusable` asks; weights not read.

        The cells a stored head computed stay valid without its weights, which only a cell
        still to compute needs.
        """
        try:
            record = HeadRecord.model_validate_json(
                self.record_path(encoder).read_text(encoding="utf-8")
            )
        except (OSError, ValidationError):
            return None
        return record if record.encoder == encoder and _trained_as(record, config, tasks) else None

    def program(self, encoder: str) -> HeadProgram:
        """The ``LearnedHead`` program of ``encoder``'s chosen head."""
        return HeadProgram(self.load(encoder).chosen)


def _trained_as(record: HeadRecord, config: HeadConfig, tasks: Sequence[str] | None) -> bool:
    same = record.seed == config.seed and [f.family for f in record.families] == list(
        config.families
    )
    return same and (tasks is None or record.tasks == list(tasks))


@dataclass
class HeadProgram:
    """The program of a learned head: the cosine of ``f(Q)`` and ``f(D)`` (no encoder call)."""

    head: Head
    name: str = LEARNED_HEAD

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return ``f(Q) f(D)ᵀ`` with rows of ``f`` L2-normalised."""
        scores: Matrix = self.head.transform(Q) @ self.head.transform(D).T
        return scores


def load_or_train(
    store: HeadStore,
    encoder: str,
    config: HeadConfig,
    data: Callable[[], Sequence[TaskEmbeddings]],
    tasks: Sequence[str] | None = None,
) -> tuple[TrainedHeads, bool]:
    """``encoder``'s stored heads when reusable (``True``), else train on ``data()`` and write.

    ``tasks``: the discovery tasks ``data()`` holds; stored heads trained on others are
    retrained (``None``: any stored heads of ``config`` are reused).
    """
    stored = store.reusable(encoder, config, tasks)
    if stored is not None:
        return stored, True
    trained = train_heads(encoder, data(), config)
    store.write(trained)
    return trained, False


@dataclass(frozen=True)
class PreparedHead:
    """What :func:`prepare_heads` did for one encoder."""

    encoder: str
    record: HeadRecord
    trained: TrainedHeads | None  # None: nothing to compute, the weights were not loaded
    reused: bool
    dropped: tuple[Path, ...]


def prepare_heads(
    keys: Iterable[CellKey],
    cells: CellStore,
    store: HeadStore,
    config: HeadConfig,
    data: Callable[[str], Sequence[TaskEmbeddings]],
    tasks: Sequence[str] | None = None,
    compute: Iterable[CellKey] | None = None,
) -> list[PreparedHead]:
    """Load or train the head of every encoder with a ``LearnedHead`` cell in ``keys``.

    A head (re)trained here makes every stored ``LearnedHead`` cell of that encoder stale: they
    are deleted, so the matrix recomputes them with the new head. An encoder whose stored record
    was trained as ``config`` asks and that has no ``LearnedHead`` cell in ``compute`` is left
    alone: its weights are not even read (a matrix can keep its head records without them).

    Args:
        keys: the planned cells.
        cells: the matrix's cell store.
        store: where heads live.
        config: how heads are trained.
        data: the discovery tasks' embeddings under an encoder, by encoder name (called only
            when that encoder's head is trained).
        tasks: the names of those discovery tasks (see :func:`load_or_train`).
        compute: the planned cells still to compute (``None``: all of ``keys``).

    """
    keys = list(keys)
    encoders = dict.fromkeys(k.encoder for k in keys if k.program == LEARNED_HEAD)
    pending = {
        k.encoder for k in (keys if compute is None else compute) if k.program == LEARNED_HEAD
    }
    out = []
    for encoder in encoders:
        record = None if encoder in pending else store.matching_record(encoder, config, tasks)
        if record is not None:
            out.append(PreparedHead(encoder, record, None, True, ()))
            continue
        trained, reused = load_or_train(store, encoder, config, partial(data, encoder), tasks)
        dropped: tuple[Path, ...] = ()
        if not reused:
            pattern = f"*/{safe_name(LEARNED_HEAD)}.json"
            dropped = tuple(sorted((cells.dir / safe_name(encoder)).glob(pattern)))
            for path in dropped:
                path.unlink()
        out.append(PreparedHead(encoder, trained.record, trained, reused, dropped))
    return out
