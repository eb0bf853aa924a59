"""The dense first stage of a segment: exact below a size, a FAISS IVF index above it.

A segment of fewer than :attr:`AnnPolicy.exact_below` documents (50,000 by default) is searched
exactly, by the product of the queries with its memory-mapped ``D`` (about 10 ms per query at
50,000 x 384 on one core, and no second copy of the vectors). A larger one gets an inverted
file over inner product (Jegou et al. 2011) whose lists hold the vectors as 4-bit product
quantizer codes scanned with SIMD lookup tables (``IndexIVFPQFastScan``, Andre et al. 2015;
two dimensions a sub-quantizer): a query fetches :attr:`AnnPolicy.rescore` times the candidates
it wants and scores those exactly from ``D``, so the scores it returns are exact inner
products. Measured at a million 256-dim documents (``benchmarks/scale.py``'s corpus, its 200
real queries, one thread, the same coarse quantizer, side by side in one run on busy cores):
3.2 ms a query at recall@100 0.969 (``nprobe`` 768, 10 candidates re-scored per result) where
the 8-bit scalar codes took 11.6 ms at 0.959 (``nprobe`` 512, 2 re-scored), and a 64 MB file
instead of 256 MB. ``codes="sq8"`` (``IndexIVFScalarQuantizer``, one byte a dimension) and
``codes="flat"`` (float32 lists, exact as found) are the alternatives, and indexes written with
them are read as they are. A fast-scan file is read into memory (FAISS maps only plain
inverted lists), a sixteenth of ``D``'s size at 384 dimensions:

* ``nlist = 4 * sqrt(n)`` cells, the FAISS guidelines' rule (4,000 cells at a million),
  k-means trained on at most ``64 * nlist`` sampled documents (FAISS warns below 39 per cell);
* ``nprobe``: the smallest of :data:`NPROBE_LADDER` whose recall@100 against the exact product
  reaches :attr:`AnnPolicy.target_recall` on calibration queries with 97.5 % confidence (the
  lower bound of its mean, :func:`recall_lower_bound`), measured when the segment is written and
  stored in its record with the mean recall reached.

The calibration queries are query-view embeddings of query text: the build's reference queries
when real ones are given, else the first sentences of sampled documents
(:func:`~.corpus.pseudo_queries`). The index keeps them (``ann-queries.npy``) for the segments
that ``index add`` and ``index compact`` write later; an index built before they were kept
calibrates an addition on its own documents' first sentences and a compaction on the midpoints
of two random documents. Midpoints lie among the documents and real queries do not, and that
decides the setting: at a million 256-dim documents (``benchmarks/scale.py``'s corpus, the
corpora's real queries, 8-bit codes) the ``nprobe`` chosen on midpoints (256) reached recall
0.921 on real queries; the one chosen on first-sentence queries (512) reached 0.959.

Why IVF and not HNSW: an IVF index is memory-mapped on load (``faiss.read_index(path,
faiss.IO_FLAG_MMAP)`` maps its inverted lists; measured with faiss 1.15 on 200,000 x 384: the
process grows by 3 MB on load where the file is 300 MB), and building it is a k-means on a
sample plus one assignment pass. ``IndexHNSWFlat`` keeps its graph in memory even with
``IO_FLAG_MMAP_IFC`` (which maps only its flat storage), and it recalls worse on this kind of
corpus: on the same million documents (``M`` 32, ``efConstruction`` 64, six minutes to build on
one core) ``efSearch`` 512 reached recall@100 0.835 on the real queries in 13 ms, where IVF
reached 0.959 in 17 ms (one thread each, timed in one run on busy cores). A flat IVF
file holds the vectors a second time (as ``D`` does): 1.5 GB at a million 384-dim documents;
an 8-bit one a quarter of that.

FAISS is the ``ann`` extra (``pip install -e '.[ann]'``). Without it a segment is written
without an ANN index and every segment is searched exactly; an index written with one is then
searched exactly too, after a one-line warning.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.deploy.arrays import load_array
from embedding_ttc.deploy.errors import IndexCorruptError
from embedding_ttc.deploy.manifest import ANN_QUERIES, AnnRecord, Manifest

ANN_FILE = "ann.faiss"
"""A segment's ANN file as written; ``ann-N.faiss`` once re-indexed (:func:`ann_file_name`)."""
ANN_GLOB = "ann*.faiss"
"""Every name a segment's ANN file can have."""
NPROBE_LADDER = (8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
"""``nprobe`` values tried at write time, smallest first (steps of 1.5 and 2: a step of 2 alone
scans up to twice the lists the target needs)."""
CALIBRATION_QUERIES = 200
CALIBRATION_K = 100
TRAIN_PER_LIST = 64
BLOCK = 65536  # rows of D read at once (D may be memory-mapped)


@dataclass(frozen=True)
class AnnPolicy:
    """When a segment gets an ANN index, and how good it must be.

    Attributes:
        exact_below: segments with fewer documents are searched exactly.
        target_recall: recall@100 the chosen ``nprobe`` must reach at write time on the
            calibration queries (the lower confidence bound of their mean).
        codes: how the inverted lists hold the vectors: ``pq4fs`` (4-bit product codes, two
            dimensions a byte, fast scan), ``sq8`` (one byte a dimension), both with the
            candidates re-scored exactly from ``D``; or ``flat`` (float32, exact as found).
        rescore: candidates fetched per result wanted and re-scored exactly (``None``: the
            codes' own, :data:`RESCORE`).
        seed: of the training sample and of the fallback calibration queries.

    """

    exact_below: int = 50_000
    target_recall: float = 0.95
    codes: Literal["pq4fs", "sq8", "flat"] = "pq4fs"
    rescore: int | None = None
    seed: int = 0

    def rescore_factor(self) -> int:
        """Candidates re-scored per result wanted: :attr:`rescore`, else the codes' own."""
        return RESCORE[self.codes] if self.rescore is None else self.rescore


RESCORE = {"pq4fs": 10, "sq8": 2, "flat": 1}
"""Candidates re-scored per result, per kind of code, chosen on the scale benchmark's real
queries at a million documents: with 4-bit codes at ``nprobe`` 512, 6 re-scored reached
recall@100 0.944 and 10 reached 0.954; with 8-bit codes, 2 reached 0.958."""

KINDS = {"pq4fs": "ivf-pq4fs", "sq8": "ivf-sq8", "flat": "ivf-flat"}
"""The :attr:`~.manifest.AnnRecord.kind` each policy's codes write."""


DEFAULT_POLICY = AnnPolicy()


def _faiss() -> Any:
    """The faiss module, or None when the ``ann`` extra is not installed."""
    try:
        import faiss
    except ImportError:
        return None
    return faiss


def nlist_for(n: int) -> int:
    """Inverted lists for ``n`` vectors: ``4 * sqrt(n)``, at least 1 and at most ``n``."""
    return max(1, min(n, int(4 * math.sqrt(n))))


def ann_file_name(directory: Path) -> str:
    """The first ``ann-N.faiss`` (N from 1) that ``directory`` does not hold: a new ANN file."""
    n = 1
    while (directory / f"ann-{n}.faiss").exists():
        n += 1
    return f"ann-{n}.faiss"


def pq_subquantizers(dim: int) -> int:
    """Sub-quantizers of the 4-bit product codes: two dimensions each (one for an odd ``dim``)."""
    return dim // 2 if dim % 2 == 0 else dim


def wants_ann(n: int, policy: AnnPolicy = DEFAULT_POLICY) -> bool:
    """Whether a segment of ``n`` documents gets an ANN index (FAISS installed, large enough)."""
    return n >= policy.exact_below and _faiss() is not None


def exact_top(D: NDArray[np.float32], Q: NDArray[np.float32], k: int) -> NDArray[np.intp]:
    """The rows of the ``k`` best documents of each query (unordered), ``D`` read in blocks."""
    best_s = np.zeros((len(Q), 0), dtype=np.float32)
    best_i = np.zeros((len(Q), 0), dtype=np.intp)
    for start in range(0, D.shape[0], BLOCK):
        S = Q @ np.asarray(D[start : start + BLOCK], dtype=np.float32).T
        best_s = np.concatenate([best_s, S], axis=1)
        best_i = np.concatenate(
            [best_i, np.broadcast_to(start + np.arange(S.shape[1]), S.shape)], 1
        )
        if best_s.shape[1] > k:
            keep = np.argpartition(-best_s, k - 1, axis=1)[:, :k]
            best_s = np.take_along_axis(best_s, keep, 1)
            best_i = np.take_along_axis(best_i, keep, 1)
    return best_i


def midpoint_queries(D: NDArray[np.float32], count: int, seed: int) -> NDArray[np.float32]:
    """Normalised midpoints of ``count`` random pairs of rows of ``D`` (no query finds itself)."""
    pairs = np.random.default_rng(seed).choice(D.shape[0], size=(count, 2))
    Q = np.asarray(D[pairs[:, 0]], np.float32) + np.asarray(D[pairs[:, 1]], np.float32)
    Q /= np.maximum(np.linalg.norm(Q, axis=1, keepdims=True), 1e-12)
    return Q


def stored_queries(root: Path, manifest: Manifest) -> NDArray[np.float32] | None:
    """The calibration queries kept at the index's root (``None``: built before they were)."""
    count = manifest.counts.ann_queries
    if not count:
        return None
    return load_array(root / f"{ANN_QUERIES}.npy", np.float32, (count, manifest.encoder.dim))


def ann_top(
    index: Any, D: NDArray[np.float32], Q: NDArray[np.float32], k: int, rescore: int = 1
) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
    """Each query's ``k`` best rows and their scores, as FAISS's ``search`` returns them.

    With ``rescore > 1`` the index is asked for ``rescore * k`` candidates, each scored
    exactly against its row of ``D``, and the best ``k`` of those kept (best first; ``-1``
    rows where a query found fewer).
    """
    Q = np.ascontiguousarray(Q, dtype=np.float32)
    if rescore <= 1:
        scores, rows = index.search(Q, k)
        return scores, rows
    _, found = index.search(Q, min(rescore * k, D.shape[0]))
    scores = np.full((len(Q), k), -np.inf, dtype=np.float32)
    rows = np.full((len(Q), k), -1, dtype=np.int64)
    for i, f in enumerate(found):
        candidates = np.sort(f[f >= 0])
        exact = np.asarray(D[candidates], dtype=np.float32) @ Q[i]
        best = np.argsort(-exact, kind="stable")[:k]
        scores[i, : best.size], rows[i, : best.size] = exact[best], candidates[best]
    return scores, rows


def _recalls(
    index: Any, D: NDArray[np.float32], Q: NDArray[np.float32], truth: NDArray[np.intp], k: int,
    rescore: int,
) -> NDArray[np.float64]:  # fmt: skip
    """Each query's recall@k of the ANN search against ``truth``."""
    _, found = ann_top(index, D, Q, k, rescore)
    return np.array([len(set(f) & set(t)) / k for f, t in zip(found, truth, strict=True)])


def recall_lower_bound(recalls: NDArray[np.float64]) -> float:
    """The one-sided 97.5 % lower confidence bound of the mean recall (normal approximation).

    The calibration queries are a sample: a mean that just reaches the target on them falls
    short of it on other queries about half the time. Measured at a million documents with
    4-bit codes, the mean alone chose ``nprobe`` 384 (0.950 on the pseudo-queries), which
    reached 0.941 on the scale benchmark's real queries.
    """
    if recalls.size < 2:
        return float(recalls.mean()) if recalls.size else 0.0
    return float(recalls.mean() - 1.96 * recalls.std(ddof=1) / math.sqrt(recalls.size))


def build_ann(
    D: NDArray[np.float32],
    directory: Path,
    policy: AnnPolicy = DEFAULT_POLICY,
    queries: NDArray[np.float32] | None = None,
    file: str = ANN_FILE,
) -> AnnRecord | None:
    """Write the ANN index of a segment's ``D`` into ``directory / file``; ``None``: exactly.

    ``queries``: query-view embeddings to calibrate it on (at most
    :data:`CALIBRATION_QUERIES` used); ``None`` or empty: midpoints of documents. ``None`` is
    returned when the segment is smaller than ``policy.exact_below`` or FAISS is absent.
    """
    n = D.shape[0]
    faiss = _faiss()
    if not wants_ann(n, policy) or faiss is None:
        return None
    rng = np.random.default_rng(policy.seed)
    dim = D.shape[1]
    nlist = nlist_for(n)
    quantizer = faiss.IndexFlatIP(dim)
    ip = faiss.METRIC_INNER_PRODUCT
    rescore = policy.rescore_factor()
    if policy.codes == "pq4fs":
        index = faiss.IndexIVFPQFastScan(quantizer, dim, nlist, pq_subquantizers(dim), 4, ip)
    elif policy.codes == "sq8":
        sq8 = faiss.ScalarQuantizer.QT_8bit
        index = faiss.IndexIVFScalarQuantizer(quantizer, dim, nlist, sq8, ip)
    else:
        index = faiss.IndexIVFFlat(quantizer, dim, nlist, ip)
        rescore = 1
    sample = np.sort(rng.choice(n, size=min(n, TRAIN_PER_LIST * nlist), replace=False))
    index.train(np.ascontiguousarray(D[sample], dtype=np.float32))
    for start in range(0, n, BLOCK):
        index.add(np.ascontiguousarray(D[start : start + BLOCK], dtype=np.float32))
    given = queries is not None and len(queries) > 0
    if queries is not None and given:
        Q = np.ascontiguousarray(queries[:CALIBRATION_QUERIES], dtype=np.float32)
    else:
        Q = midpoint_queries(D, CALIBRATION_QUERIES, policy.seed)
    k = min(CALIBRATION_K, n)
    truth = exact_top(D, Q, k)
    recall, nprobe = 0.0, nlist
    for probe in (*[p for p in NPROBE_LADDER if p < nlist], nlist):
        index.nprobe = probe
        recalls = _recalls(index, D, Q, truth, k, rescore)
        recall = float(recalls.mean())
        if recall_lower_bound(recalls) >= policy.target_recall:
            nprobe = probe
            break
    faiss.write_index(index, str(directory / file))
    return AnnRecord(
        kind=KINDS[policy.codes],  # type: ignore[arg-type]
        file=file,
        nlist=nlist,
        nprobe=nprobe,
        recall=recall,
        rescore=rescore,
        calibration="queries" if given else "midpoints",
    )


_WARNED: list[bool] = []


def load_ann(directory: Path, record: AnnRecord | None) -> Any:
    """The segment's FAISS index, memory-mapped; ``None`` to search it exactly."""
    if record is None:
        return None
    faiss = _faiss()
    if faiss is None:
        if not _WARNED:
            _WARNED.append(True)
            warnings.warn(
                "faiss is not installed: segments with an ANN index are searched exactly "
                "(pip install -e '.[ann]')",
                stacklevel=2,
            )
        return None
    path = directory / record.file
    try:
        index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP)
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "unreadable"
        raise IndexCorruptError(f"index file {path} is not a FAISS index ({first})") from None
    index.nprobe = record.nprobe
    return index
