"""Metering: count every text encoded, by stage, side and view, and the seconds spent encoding.

One text encoded is one unit of test-time compute (the paper, §3.1). The evaluator encodes each
query and each document once (the *base* stage); anything a program encodes on top is the
*program* stage. Each encode is also attributed to a *side*: ``index`` work is document-side and
amortisable (done once when the corpus is indexed), ``query`` work is paid per query. The cost
ratio of §3.3 is ``c = (T_base + T_prog) / T_base``.

A cache hit still counts as a logical encoder call (the paper's definition of cost); the seconds
recorded here are wall time inside the wrapped encoder, so a warm cache shows few seconds.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from embedding_ttc.encoders.base import Embeddings, Encoder, EncoderInfo

Stage = Literal["base", "program"]
Side = Literal["index", "query"]


@dataclass(frozen=True)
class CostCounts:
    """A snapshot of a meter: texts encoded per (stage, side, view), and encode seconds."""

    texts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def total(self, stage: Stage | None = None, side: Side | None = None) -> int:
        """Texts encoded, optionally restricted to one stage and/or side."""
        out = 0
        for key, n in self.texts.items():
            st, sd, _view = key.split("/", 2)
            if (stage is None or st == stage) and (side is None or sd == side):
                out += n
        return out

    @property
    def cost_ratio(self) -> float:
        """``c = (T_base + T_prog) / T_base``; 1.0 for a program that encodes nothing more."""
        base = self.total("base")
        return (base + self.total("program")) / base if base else float("nan")

    def minus(self, other: CostCounts) -> CostCounts:
        """Counts accumulated since the snapshot ``other``."""
        keys = set(self.texts) | set(other.texts)
        diff = {k: self.texts.get(k, 0) - other.texts.get(k, 0) for k in keys}
        return CostCounts({k: v for k, v in diff.items() if v}, self.seconds - other.seconds)


class Meter:
    """Accumulates counts; the current stage and side are set with :meth:`scope`."""

    def __init__(self) -> None:
        self._texts: Counter[str] = Counter()
        self._seconds = 0.0
        self.stage: Stage = "program"
        self.side: Side = "query"

    @contextmanager
    def scope(self, *, stage: Stage | None = None, side: Side | None = None) -> Iterator[None]:
        """Attribute encodes inside the block to ``stage`` and/or ``side``."""
        prev = (self.stage, self.side)
        self.stage = stage or self.stage
        self.side = side or self.side
        try:
            yield
        finally:
            self.stage, self.side = prev

    def record(self, view: str, n: int, seconds: float) -> None:
        """Count ``n`` texts encoded under ``view`` in the current scope."""
        self._texts[f"{self.stage}/{self.side}/{view}"] += n
        self._seconds += seconds

    def snapshot(self) -> CostCounts:
        """An immutable copy of the counts so far."""
        return CostCounts(dict(self._texts), self._seconds)


class MeteredEncoder:
    """An encoder that counts every call on a :class:`Meter`, then delegates."""

    def __init__(self, inner: Encoder, meter: Meter | None = None) -> None:
        self.inner = inner
        self.meter = meter or Meter()

    @property
    def info(self) -> EncoderInfo:
        """The wrapped encoder's info."""
        return self.inner.info

    def encode(
        self,
        texts: Sequence[str],
        *,
        view: str,
        dim: int | None = None,
        max_length: int | None = None,
    ) -> Embeddings:
        """Encode through the wrapped encoder and record the texts and seconds."""
        start = time.perf_counter()
        out = self.inner.encode(texts, view=view, dim=dim, max_length=max_length)
        self.meter.record(view, len(texts), time.perf_counter() - start)
        return out
