"""The harness benchmark: P0 on a suite, cold (empty cache) then warm, measured in one run.

* ``total``: wall seconds for loading every task and evaluating P0 on it (model loading is
  measured apart and excluded: it is paid once per process);
* ``forward``: seconds inside model forward passes (cache misses);
* ``overhead = 1 - forward / total`` on the cold run: what the harness itself costs (parsing,
  hashing, cache writes, ranking, nDCG);
* ``warm_speedup = cold total / warm total``: what the on-disk cache buys on a re-run.

Targets: overhead <= 0.05 cold; warm speed-up >= 20.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.encoders.catalog import load_encoder
from embedding_ttc.evaluation.evaluate import evaluate
from embedding_ttc.programs.p0 import P0
from embedding_ttc.tasks.catalog import find_data_root, load_task, suite_tasks


@dataclass
class PassTiming:
    """One pass over the suite."""

    total_seconds: float = 0.0
    forward_seconds: float = 0.0
    ndcg: dict[str, float] = field(default_factory=dict)


@dataclass
class BenchReport:
    """Cold and warm passes, and the model load time."""

    tasks: list[str]
    load_seconds: float
    cold: PassTiming
    warm: PassTiming

    @property
    def overhead(self) -> float:
        """``1 - forward / total`` of the cold pass."""
        return 1.0 - self.cold.forward_seconds / self.cold.total_seconds

    @property
    def warm_speedup(self) -> float:
        """Cold total over warm total."""
        return self.cold.total_seconds / self.warm.total_seconds

    def last_line(self) -> str:
        """The machine-readable closing line."""
        return f"overhead={self.overhead:.4f} warm_speedup={self.warm_speedup:.1f}"


def _one_pass(
    tasks: list[str],
    encoder: CachedEncoder,
    data_root: Path | None,
    log: Callable[[str], None],
    tag: str,
) -> PassTiming:
    timing = PassTiming()
    for name in tasks:
        fwd0 = encoder.stats.forward_seconds
        start = time.perf_counter()
        task = load_task(name, data_root)
        result = evaluate(P0(), task, encoder)
        elapsed = time.perf_counter() - start
        fwd = encoder.stats.forward_seconds - fwd0
        timing.total_seconds += elapsed
        timing.forward_seconds += fwd
        timing.ndcg[name] = result.ndcg_at_10
        log(
            f"{tag:4s} {name:24s} total {elapsed:8.3f}s  forward {fwd:8.3f}s  "
            f"nDCG@10 {result.ndcg_at_10:.4f}"
        )
    return timing


def run_bench(
    *,
    suite: str,
    encoder_name: str,
    data_dir: Path | None = None,
    tasks: list[str] | None = None,
    device: str = "auto",
    log: Callable[[str], None] = print,
) -> BenchReport:
    """Run the benchmark on ``device``; ``log`` receives one line per task and pass."""
    names = suite_tasks(suite)
    if tasks:
        names = [t for t in names if t in tasks] or tasks
    data_root = find_data_root(data_dir)
    start = time.perf_counter()
    inner = load_encoder(encoder_name, device=device)
    with tempfile.TemporaryDirectory(prefix="ettc-bench-") as tmp:
        cold_enc = CachedEncoder(inner, tmp)
        cold_enc.encode(["warm-up"], view="retrieval.query")  # load weights outside the timing
        cold_enc.stats.forward_seconds = 0.0
        load_seconds = time.perf_counter() - start
        log(f"encoder {encoder_name} loaded in {load_seconds:.1f}s; suite {suite}: {names}")
        cold = _one_pass(names, cold_enc, data_root, log, "cold")
        warm = _one_pass(names, CachedEncoder(inner, tmp), data_root, log, "warm")
    if cold.ndcg != warm.ndcg:
        raise RuntimeError(f"warm results differ from cold: {cold.ndcg} vs {warm.ndcg}")
    report = BenchReport(names, load_seconds, cold, warm)
    log(
        f"cold total {cold.total_seconds:.2f}s (forward {cold.forward_seconds:.2f}s), "
        f"warm total {warm.total_seconds:.3f}s"
    )
    return report
