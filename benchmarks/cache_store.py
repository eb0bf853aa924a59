"""The embedding cache before and after packing: disk use and warm reads, side by side in one run.

For each task, the benchmark takes the entries of the task's texts (queries under the query
view, documents under the passage view) that an existing cache holds in the file-per-entry
layout, copies them to a temporary folder (the source cache is only read), and measures:

* ``old``: a warm pass in the old layout, entry by entry, with the old encoder's read path
  (:func:`~embedding_ttc.encoders.cache_migration.read_legacy`: one open and one read per
  entry, digest checked, twin views tried on a miss);
* the migration of that folder into its database (entries/s);
* ``new``: the same warm pass through a new :class:`~embedding_ttc.encoders.cache.CachedEncoder`
  over the database (as a re-run in a new process would), in the evaluator's chunks
  (``encode_texts``); it must run no forward pass and return the same bytes as the old pass;
* disk: ``du`` of the model folder (allocated blocks of files and folders) in each layout.

Run (the texts must be in the cache already, e.g. after ``embedding-ttc evaluate`` on them)::

    .venv/bin/python benchmarks/cache_store.py --task scifact --task vaswani_npl

The last line is machine-readable: ``disk_ratio`` (old bytes / new bytes on disk) and
``read_speedup`` (new texts/s / old texts/s), both over every task.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from embedding_ttc.encoders.base import PASSAGE, QUERY
from embedding_ttc.encoders.cache import CachedEncoder, default_cache_dir
from embedding_ttc.encoders.cache_migration import legacy_path, migrate_folder, read_legacy
from embedding_ttc.encoders.catalog import load_encoder
from embedding_ttc.evaluation.evaluate import encode_texts
from embedding_ttc.tasks.catalog import load_task, resolve_data_root

Passes = dict[str, np.ndarray]


def du(folder: Path) -> int:
    """Allocated bytes of a folder's files and sub-folders, as ``du`` counts them."""
    total = os.lstat(folder).st_blocks * 512
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in [*dirnames, *filenames]:
            total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
    return total


@dataclass
class Cell:
    """One task's distinct texts per view, as the evaluator encodes them."""

    task: str
    texts: dict[str, list[str]]

    @property
    def n(self) -> int:
        """Texts over both views."""
        return sum(len(t) for t in self.texts.values())


def copy_entries(cache: CachedEncoder, source: Path, target: Path, cell: Cell) -> Cell:
    """Copy the cell's entries from ``source`` to ``target``; keep only texts found there."""
    kept: dict[str, list[str]] = {}
    for view, texts in cell.texts.items():
        kept[view] = []
        for text in texts:
            for v in [view, *cache._twin_views(view)]:
                src = legacy_path(source, cache.key(text, v, None))
                if src.is_file():
                    dst = legacy_path(target, cache.key(text, v, None))
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(src, dst)
                    kept[view].append(text)
                    break
    return Cell(cell.task, kept)


def old_pass(cache: CachedEncoder, folder: Path, texts: Sequence[str], view: str) -> np.ndarray:
    """The old encoder's warm path: a key, one file read (twins on a miss) per text."""
    dim = cache.info.dim
    out = np.empty((len(texts), dim), dtype=np.float32)
    twins = cache._twin_views(view)
    for i, text in enumerate(texts):
        vec = read_legacy(folder, cache.key(text, view, None), dim)
        for twin in twins:
            if vec is not None:
                break
            vec = read_legacy(folder, cache.key(text, twin, None), dim)
        if vec is None:
            raise SystemExit(f"an entry vanished from {folder}")
        out[i] = vec
    return out


def best_of(repeat: int, fn: Callable[[], Passes]) -> tuple[float, Passes]:
    """The shortest wall time of ``repeat`` calls, and the last call's result."""
    best, result = float("inf"), {}
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def main(argv: list[str] | None = None) -> int:
    """Measure every task in both layouts and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encoder", default="all-MiniLM-L6-v2", help="registry name")
    parser.add_argument("--task", action="append", default=[], help="task (default: scifact)")
    parser.add_argument("--source", type=Path, help="cache root to copy entries from")
    parser.add_argument("--data-dir", type=Path, help="data root")
    parser.add_argument("--repeat", type=int, default=3, help="passes timed; the best counts")
    args = parser.parse_args(argv)
    tasks = args.task or ["scifact"]
    data_root = resolve_data_root(args.data_dir)
    inner = load_encoder(args.encoder)
    source_root = args.source or default_cache_dir()
    print(
        f"{'task':<14} {'texts':>6} {'vectors MB':>10} {'old du MB':>9} {'new du MB':>9} "
        f"{'old/new':>7} {'new/vec':>7} {'old t/s':>9} {'new t/s':>9} {'speedup':>7} "
        f"{'migrate e/s':>11}"
    )
    sums = {"old_du": 0, "new_du": 0, "n": 0, "old_s": 0.0, "new_s": 0.0}
    for name in tasks:
        task = load_task(name, data_root)
        with tempfile.TemporaryDirectory(prefix="cache-bench-") as tmp:
            cache = CachedEncoder(inner, tmp)
            source = source_root / cache.dir.name
            unique = {QUERY: task.query_texts, PASSAGE: task.doc_texts}
            wanted = Cell(name, {v: list(dict.fromkeys(t)) for v, t in unique.items()})
            cell = copy_entries(cache, source, cache.dir, wanted)
            if cell.n < wanted.n:
                print(f"# {name}: {wanted.n - cell.n} of {wanted.n} texts not in {source}")
            if cell.n == 0:
                continue
            old_du = du(cache.dir)

            def old_passes(c: CachedEncoder = cache, cl: Cell = cell) -> Passes:
                return {v: old_pass(c, c.dir, t, v) for v, t in cl.texts.items()}

            old_s, old = best_of(args.repeat, old_passes)
            start = time.perf_counter()
            report = migrate_folder(cache.dir)
            migrate_s = time.perf_counter() - start
            cache.store.checkpoint()
            new_du = du(cache.dir)
            opened: list[CachedEncoder] = []

            def new_pass(
                root: str = tmp, cl: Cell = cell, opened: list[CachedEncoder] = opened
            ) -> Passes:
                # A new encoder each time: a re-run is a new process, its SQLite page cache
                # empty (the OS's page cache is warm for both layouts).
                enc = CachedEncoder(inner, root)
                opened.append(enc)
                return {v: encode_texts(enc, t, v) for v, t in cl.texts.items()}

            new_s, new = best_of(args.repeat, new_pass)
            if any(e.stats.misses for e in opened) or any(
                not np.array_equal(old[v], new[v]) for v in cell.texts
            ):
                raise SystemExit(f"{name}: the packed pass differs from the old one")
            fresh = opened[-1]
            vectors = len(fresh.store) * inner.info.dim * 4
            print(
                f"{name:<14} {cell.n:>6} {vectors / 1e6:>10.1f} {old_du / 1e6:>9.1f} "
                f"{new_du / 1e6:>9.1f} {old_du / new_du:>7.2f} {new_du / vectors:>7.3f} "
                f"{cell.n / old_s:>9.0f} {cell.n / new_s:>9.0f} {old_s / new_s:>7.2f} "
                f"{(report.moved + report.kept) / migrate_s:>11.0f}"
            )
            sums["old_du"] += old_du
            sums["new_du"] += new_du
            sums["n"] += cell.n
            sums["old_s"] += old_s
            sums["new_s"] += new_s
            for enc in [cache, *opened]:
                enc.store.close()
    if not sums["n"]:
        raise SystemExit("no task's texts were found in the source cache")
    print(
        f"disk_ratio={sums['old_du'] / sums['new_du']:.2f} "
        f"read_speedup={sums['old_s'] / sums['new_s']:.2f}"
    )
    return 0


if __name__ == "__main__":
    from data_errors import run

    raise SystemExit(run(main))
