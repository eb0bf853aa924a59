"""A deployed index at scale: build, size, memory and latency from 10,000 to 1,000,000 documents.

The corpus is real text: overlapping 40-word windows (a new window every 16 words, each at
least 12 words) over the documents of the shared English corpora, in a fixed order
(:data:`SOURCES`), as passage retrieval chunks a corpus; the first N windows are the corpus of
scale N. The 18.6 million words of those corpora give about 1.1 million distinct windows; if a
scale asks for more, the windows repeat under new ids, and the table says how many did. The
encoder is a static one (``wordllama-l2-supercat``, 256 dimensions), which keeps a million
documents affordable to encode on two cores; the queries are the same corpora's real queries.

For each scale and program (default P0, SoftCentroid, BidirZScore, LexicalHybridRRF), an index
is built (``embedding-ttc index build``, reused when present under ``--work``) and served
(``embedding-ttc serve``, one worker), and the table reports:

* the build time and the index's size on disk;
* the resident memory of the service after the requests (VmRSS);
* p50 / p95 of ``POST /v1/rerank`` with 100 candidate texts (a moving window of the corpus,
  so the index's stored work is used) and of ``POST /search`` (first stage, 100 candidates,
  reranked), one request at a time; ``/search`` also with the exact first stage
  (``--first-stage exact``: every document scored, the ANN index ignored) in the same run;
* once per scale, the ANN's recall@100 against the exact first stage, and each first stage's
  milliseconds per query, measured in process.

Targets: ``/search`` p95 at the largest scale within 2x of its p95 at the smallest; recall@100
at least 0.95. The last line is machine-readable.

    .venv/bin/python benchmarks/scale.py --work /tmp/scale --scales 10000 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from serve_load import free_port, post, start_server, stop_server

from embedding_ttc.tasks.catalog import resolve_data_root

SOURCES = (
    "aila_casedocs_full", "medquad", "scifact", "lemb_qmsum", "birco_arguana",
    "birco_doris_mae_dev", "vaswani_npl", "birco_wtb", "cranfield", "financebench_pages",
)  # fmt: skip
"""The shared corpora the windows come from (English, about 18.6 million words)."""

WINDOW, STRIDE, MIN_WORDS = 40, 16, 12
"""Words per window, words between window starts, and the shortest window kept."""

ENCODER = "wordllama-l2-supercat"
PROGRAMS = ("P0", "SoftCentroid", "BidirZScore", "LexicalHybridRRF")
CANDIDATES = 100


@dataclass(frozen=True)
class CorpusInfo:
    """What the corpus file of the largest scale holds."""

    documents: int
    distinct: int
    sources: list[str]


def windows(root: Path) -> Iterator[str]:
    """The windows of :data:`SOURCES`, in order."""
    for name in SOURCES:
        with open(root / name / "corpus.jsonl", encoding="utf-8") as fh:
            for line in fh:
                doc = json.loads(line)
                words = f"{doc.get('title', '')} {doc.get('text', '')}".split()
                for start in range(0, max(len(words) - MIN_WORDS, 0) + 1, STRIDE):
                    piece = words[start : start + WINDOW]
                    if len(piece) >= MIN_WORDS:
                        yield " ".join(piece)


def write_corpus(root: Path, work: Path, n: int) -> CorpusInfo:
    """``work/corpus-N.jsonl`` for the largest scale (cycling the windows if they run out)."""
    path, meta = work / f"corpus-{n}.jsonl", work / f"corpus-{n}.json"
    if path.exists() and meta.exists():
        return CorpusInfo(**json.loads(meta.read_text()))
    distinct: list[str] = []
    for text in windows(root):
        distinct.append(text)
        if len(distinct) == n:
            break
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        for i in range(n):
            out.write(
                json.dumps({"_id": f"w{i:07d}", "title": "", "text": distinct[i % len(distinct)]})
            )
            out.write("\n")
    tmp.rename(path)
    info = CorpusInfo(documents=n, distinct=len(distinct), sources=list(SOURCES))
    meta.write_text(json.dumps(asdict(info)))
    return info


def prefix(work: Path, largest: int, n: int) -> Path:
    """The corpus of scale ``n``: the first ``n`` lines of the largest one."""
    path = work / f"corpus-{n}.jsonl"
    if not path.exists():
        with open(work / f"corpus-{largest}.jsonl", encoding="utf-8") as src:
            lines = [next(src) for _ in range(n)]
        path.write_text("".join(lines), encoding="utf-8")
    return path


QUERY_CHARS = 1000
"""Longest query sent (AILA's queries are whole case descriptions, beyond the service's 2,048
characters; a search box sends far less)."""


def queries(root: Path, count: int) -> list[str]:
    """Real queries of the source corpora up to :data:`QUERY_CHARS`, interleaved, ``count``."""
    per: list[list[str]] = []
    for name in SOURCES:
        path = root / name / "queries.jsonl"
        if path.exists():
            with open(path, encoding="utf-8") as fh:
                texts = [json.loads(line)["text"] for line in fh]
                per.append([t for t in texts if len(t) <= QUERY_CHARS])
    out: list[str] = []
    for i in range(max(len(q) for q in per)):
        out += [q[i] for q in per if i < len(q)]
    return out[:count]


def ensure_index(
    work: Path, corpus: Path, program: str, n: int, threads: int
) -> tuple[Path, float]:
    """The index of ``program`` at scale ``n`` and its build seconds (built now if absent)."""
    out = work / f"ix-{program}-{n}"
    record = work / f"ix-{program}-{n}.build.json"
    if out.exists() and record.exists():
        return out, float(json.loads(record.read_text())["seconds"])
    cmd = [sys.executable, "-m", "embedding_ttc.cli.deploy", "index", "build", "--corpus",
           str(corpus), "--program", program, "--encoder", ENCODER, "--out", str(out),
           "--no-progress", "--threads", str(threads), "--force", "--no-cache"]  # fmt: skip
    print("$ " + " ".join(cmd[3:]), file=sys.stderr, flush=True)
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    seconds = time.perf_counter() - start
    record.write_text(json.dumps({"seconds": seconds}))
    return out, seconds


def disk_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def rss_mb(pid: int) -> float:
    """Resident memory of a process (VmRSS), MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentiles(seconds: Sequence[float]) -> tuple[float, float]:
    """p50 and p95 in ms."""
    qs = statistics.quantiles(seconds, n=20, method="inclusive")
    return statistics.median(seconds) * 1000, qs[18] * 1000


def timed(url: str, bodies: Sequence[dict[str, object]]) -> tuple[float, float, int]:
    """p50, p95 (ms) and errors of sending ``bodies`` one at a time (two warm-up requests)."""
    for body in bodies[:2]:
        post(url, body)
    seconds, errors = [], 0
    for body in bodies:
        status, took = post(url, body)
        errors += status != 200
        seconds.append(took)
    p50, p95 = percentiles(seconds)
    return p50, p95, errors


def first_stage_recall(index: Path, qs: Sequence[str], threads: int) -> dict[str, float]:
    """ANN recall@100 against the exact first stage, and each one's ms per query."""
    from embedding_ttc.cli.common import build_encoder
    from embedding_ttc.cli.deploy import set_threads
    from embedding_ttc.deploy.index import Index
    from embedding_ttc.deploy.reranker import Reranker

    set_threads(threads)
    ix = Index.load(index)
    reranker = Reranker(ix, build_encoder(ENCODER, None, True))
    reranker.first_stage(qs[:4], CANDIDATES, "dense")  # page in and warm up
    out: dict[str, float] = {}
    lists = {}
    for kind in ("dense", "exact"):
        start = time.perf_counter()
        lists[kind] = [reranker.first_stage([q], CANDIDATES, kind)[0] for q in qs]  # type: ignore[arg-type]
        out[f"{kind}_ms"] = (time.perf_counter() - start) * 1000 / len(qs)
    hits = [
        len(set(a) & set(e)) / len(e) for a, e in zip(lists["dense"], lists["exact"], strict=True)
    ]
    out["recall"] = sum(hits) / len(hits)
    out["ann_segments"] = float(sum(s.ann is not None for s in ix.manifest.segments))
    return out


def serve_row(
    index: Path, corpus: Path, qs: Sequence[str], args: argparse.Namespace
) -> dict[str, object]:
    """The service's memory and latencies over one index, with both first stages."""
    texts = []
    with open(corpus, encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if i >= args.requests * 7 + CANDIDATES:
                break
            texts.append(json.loads(line)["text"])
    rerank = [
        {"query": qs[j % len(qs)], "documents": texts[j * 7 : j * 7 + CANDIDATES], "top_n": 10}
        for j in range(args.requests)
    ]
    search = [{"query": qs[j % len(qs)], "k": 10} for j in range(args.requests)]
    row: dict[str, object] = {}
    for stage in ("dense", "exact"):
        port = free_port()
        proc = start_server(index, port, args.threads, first_stage=stage, preload=args.preload)
        try:
            base = f"http://127.0.0.1:{port}"
            if stage == "dense":
                row["rerank"] = timed(f"{base}/v1/rerank", rerank)
            row[f"search_{stage}"] = timed(f"{base}/search", search)
            if stage == "dense":
                row["rss_mb"] = rss_mb(proc.pid)
        finally:
            code, traceback = stop_server(proc)
        row[f"exit_{stage}"] = code if not traceback else -1
    return row


def render(rows: list[dict[str, object]], recalls: dict[int, dict[str, float]]) -> str:
    head = ["docs", "program", "build s", "index MB", "service RSS MB", "/v1/rerank p50 / p95 ms",
            "/search p50 / p95 ms", "/search exact p50 / p95 ms", "errors", "exit"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        rr, sd, se = r["rerank"], r["search_dense"], r["search_exact"]
        errors = rr[2] + sd[2] + se[2]  # type: ignore[index]
        cells = [f"{r['docs']:,}", str(r["program"]), f"{r['build_s']:.0f}", f"{r['index_mb']:.0f}",
                 f"{r['rss_mb']:.0f}", f"{rr[0]:.1f} / {rr[1]:.1f}", f"{sd[0]:.1f} / {sd[1]:.1f}",
                 f"{se[0]:.1f} / {se[1]:.1f}", str(errors),
                 f"{r['exit_dense']}, {r['exit_exact']}"]  # type: ignore[index]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "| docs | ANN segments | recall@100 vs exact | dense ms/query | exact ms/query |",
              "|---|---|---|---|---|"]  # fmt: skip
    for n, rec in sorted(recalls.items()):
        lines.append(f"| {n:,} | {rec['ann_segments']:.0f} | {rec['recall']:.3f} | "
                     f"{rec['dense_ms']:.1f} | {rec['exact_ms']:.1f} |")  # fmt: skip
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="corpora and indexes (reused)")
    parser.add_argument("--scales", type=int, nargs="+", default=[10_000, 1_000_000])
    parser.add_argument("--programs", nargs="+", default=list(PROGRAMS))
    parser.add_argument("--requests", type=int, default=200, help="requests per endpoint")
    parser.add_argument("--recall-queries", type=int, default=200)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--preload", action="store_true",
                        help="start each server with serve --preload")  # fmt: skip
    parser.add_argument("--data-dir", type=Path)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    root = resolve_data_root(args.data_dir)
    args.work.mkdir(parents=True, exist_ok=True)
    scales = sorted(args.scales)
    info = write_corpus(root, args.work, scales[-1])
    qs = queries(root, max(args.requests, args.recall_queries))
    print(f"corpus: {info.documents:,} windows, {info.distinct:,} distinct", file=sys.stderr)
    rows: list[dict[str, object]] = []
    recalls: dict[int, dict[str, float]] = {}
    for n in scales:
        corpus = prefix(args.work, scales[-1], n)
        for program in args.programs:
            index, build_s = ensure_index(args.work, corpus, program, n, args.threads)
            if n not in recalls:
                recalls[n] = first_stage_recall(index, qs[: args.recall_queries], args.threads)
            row = serve_row(index, corpus, qs, args)
            row.update(docs=n, program=program, build_s=build_s, index_mb=disk_mb(index))
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    print(render(rows, recalls))
    small, large = scales[0], scales[-1]
    ratios = []
    for program in args.programs:
        p95 = {r["docs"]: r["search_dense"][1] for r in rows if r["program"] == program}  # type: ignore[index]
        ratios.append(f"search_p95_ratio[{program}]={p95[large] / p95[small]:.2f}")
    print(" ".join(ratios), f"recall@100={recalls[large]['recall']:.3f}",
          f"distinct={info.distinct}")  # fmt: skip
    return 0


if __name__ == "__main__":
    from data_errors import run

    raise SystemExit(run(main))
