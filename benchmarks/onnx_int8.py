"""onnx-int8 against torch for the default encoder, side by side in one run.

* throughput: texts/s of each backend on the same first N SciFact passages, best of alternating
  rounds (torch, onnx, torch, onnx, ...), so both see the same background load;
* agreement: mean and min cosine between the two backends' embeddings of those passages;
* quality: nDCG@10 of P0 (plain cosine retrieval) on each task, for both backends, with no
  embedding cache, so every task's time is real encoding.

The last line is machine-readable: ``speedup=... max_ndcg_drop=... mean_cos=... min_cos=...``.
Targets: speedup >= 2, max_ndcg_drop <= 0.005.

    .venv/bin/python benchmarks/onnx_int8.py --n 400 --threads 2
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from embedding_ttc.encoders.base import PASSAGE, QUERY, Encoder
from embedding_ttc.encoders.catalog import DEFAULT_ENCODER, load_encoder
from embedding_ttc.encoders.onnx import OnnxInt8Encoder
from embedding_ttc.evaluation.evaluate import evaluate
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.tasks.catalog import load_task, resolve_data_root

TASKS = ("scifact", "aila_statutes", "financebench")


def _rate(encoder: Encoder, texts: Sequence[str]) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    out = encoder.encode(texts, view=PASSAGE)
    return len(texts) / (time.perf_counter() - start), out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encoder", default=DEFAULT_ENCODER)
    parser.add_argument("--n", type=int, default=400, help="SciFact passages for throughput")
    parser.add_argument("--rounds", type=int, default=2, help="alternating timing rounds")
    parser.add_argument("--threads", type=int, default=2, help="threads for both backends")
    parser.add_argument("--tasks", nargs="*", default=list(TASKS), help="tasks for nDCG@10")
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--onnx-cache", type=Path, help="export folder (default: user cache)")
    args = parser.parse_args(argv)

    import onnxruntime
    import torch

    torch.set_num_threads(args.threads)
    data_root = resolve_data_root(args.data_dir)
    start = time.perf_counter()
    base = load_encoder(args.encoder)
    fast = OnnxInt8Encoder(base, threads=args.threads, cache_dir=args.onnx_cache)
    fast.load()
    manifest = fast.manifest or {}
    print(
        f"{args.encoder}: torch {torch.__version__} vs onnxruntime {onnxruntime.__version__}, "
        f"{args.threads} threads; export {fast.export_dir} (built in "
        f"{manifest.get('build_seconds')} s on {manifest.get('created')}); "
        f"ready in {time.perf_counter() - start:.1f} s",
        flush=True,
    )
    for enc in (base, fast):  # load weights and warm up outside every timing
        enc.encode(["warm-up"], view=QUERY)

    passages = load_task("scifact", data_root).doc_texts[: args.n]
    rates: dict[str, list[float]] = {"torch": [], "onnx-int8": []}
    outs: dict[str, np.ndarray] = {}
    for r in range(args.rounds):
        for name, enc in (("torch", base), ("onnx-int8", fast)):
            rate, outs[name] = _rate(enc, passages)
            rates[name].append(rate)
            print(f"round {r + 1} {name:9s} {rate:6.1f} texts/s", flush=True)
    cos = np.sum(outs["torch"] * outs["onnx-int8"], axis=1)
    best = {k: max(v) for k, v in rates.items()}
    speedup = best["onnx-int8"] / best["torch"]

    program = get_program("P0")
    rows = []
    for task_name in args.tasks:
        task = load_task(task_name, data_root)
        row: list[float] = []
        for enc in (base, fast):
            t0 = time.perf_counter()
            result = evaluate(program, task, enc)
            row += [result.ndcg_at_10, time.perf_counter() - t0]
        rows.append((task_name, task.n_docs, task.n_queries, *row))
        print(f"evaluated {task_name}: {row}", flush=True)

    print()
    print(f"throughput on {len(passages)} SciFact passages (best of {args.rounds} rounds)")
    print(f"  {'':22s} {'torch':>10s} {'onnx-int8':>10s}")
    print(f"  {'texts/s':22s} {best['torch']:10.1f} {best['onnx-int8']:10.1f}")
    print(f"  {'speed-up':22s} {'':10s} {speedup:10.2f}x")
    print(f"  cosine(onnx-int8, torch): mean {cos.mean():.4f}  min {cos.min():.4f}")
    print()
    print("nDCG@10, P0 (plain cosine), no embedding cache")
    header = ("task", "docs", "queries", "torch", "onnx-int8", "drop", "torch s", "onnx s")
    print("  {:16s} {:>6s} {:>7s} {:>8s} {:>9s} {:>8s} {:>8s} {:>8s}".format(*header))
    drops = []
    for name, docs, queries, nd_t, s_t, nd_o, s_o in rows:
        drops.append(nd_t - nd_o)
        print(
            f"  {name:16s} {docs:6d} {queries:7d} {nd_t:8.4f} {nd_o:9.4f} {nd_t - nd_o:+8.4f} "
            f"{s_t:8.1f} {s_o:8.1f}"
        )
    max_drop = max(drops) if drops else float("nan")
    print()
    print(
        f"speedup={speedup:.2f} max_ndcg_drop={max_drop:.4f} "
        f"mean_cos={cos.mean():.4f} min_cos={cos.min():.4f}"
    )
    return 0


if __name__ == "__main__":
    from data_errors import run

    raise SystemExit(run(main))
