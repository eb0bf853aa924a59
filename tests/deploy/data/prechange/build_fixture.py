"""Rebuild the pre-change index fixture (see README.md beside this file).

Run from the repository root with the default encoder installed::

    HF_HUB_OFFLINE=1 PYTHONPATH=src python tests/deploy/data/prechange/build_fixture.py

It builds one index per program of :data:`PROGRAMS` from ``corpus.jsonl`` with the command
line, then records what the loaded index answers for :data:`QUERIES` (the query embeddings in
``queries.npy``, the rankings in ``expected.json``). Rebuilding replaces the fixture; do it only
when the index format changes on purpose.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np

from embedding_ttc.cli import main as cli_main
from embedding_ttc.deploy import Reranker
from embedding_ttc.encoders.base import QUERY
from embedding_ttc.encoders.catalog import DEFAULT_ENCODER, load_encoder

HERE = Path(__file__).resolve().parent
PROGRAMS = ("P0", "SentMaxSim", "BidirZScore", "LexicalHybridRRF")
QUERIES = (
    "how do bees tell each other where food is",
    "why are coral reefs losing their colour",
    "what happens to money when inflation rises",
)
K = 5
SHORTLIST = 10


def main() -> None:
    """Build the indexes and record their answers."""
    os.chdir(HERE)  # the manifests record the corpus as "corpus:corpus.jsonl"
    for program in PROGRAMS:
        out = HERE / program
        shutil.rmtree(out, ignore_errors=True)
        code = cli_main(
            [
                "index",
                "build",
                "--corpus",
                "corpus.jsonl",
                "--program",
                program,
                "--out",
                program,
                "--reference-queries",
                "reference_queries.txt",
                "--reference-size",
                "8",
                "--no-cache",
                "--no-progress",
            ]
        )
        assert code == 0, program
        (HERE / f".{program}.lock").unlink(missing_ok=True)
    encoder = load_encoder(DEFAULT_ENCODER)
    np.save(HERE / "queries.npy", encoder.encode(list(QUERIES), view=QUERY))
    expected: dict[str, object] = {"queries": list(QUERIES), "k": K, "shortlist": SHORTLIST}
    for program in PROGRAMS:
        reranker = Reranker.load(HERE / program, encoder=encoder, verify=True)
        every = list(reranker.index.doc_ids)
        expected[program] = {
            "rerank": reranker.rerank_batch(QUERIES, [every] * len(QUERIES), K),
            "dense": reranker.search_batch(QUERIES, K, "dense", SHORTLIST),
            "bm25": reranker.search_batch(QUERIES, K, "bm25", SHORTLIST),
        }
    text = json.dumps(expected, indent=1) + "\n"
    (HERE / "expected.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
