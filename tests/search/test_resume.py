"""Kill the search with SIGKILL mid-run, re-run the same command: nothing lost or duplicated.

The structural proposer is deterministic given the seed and the ledger, so the resumed run
must produce exactly the records of an uninterrupted run (same programs, same numbers).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from embedding_ttc.runs.ledger import Ledger

GENERATIONS = 6


def command(run_dir: Path, data_dir: Path, cache_dir: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "embedding_ttc.cli",
        "search",
        "--task",
        "aila_statutes",
        "--encoder",
        "tokenlearn-static-64",
        "--strategy",
        "structural",
        "--generations",
        str(GENERATIONS),
        "--run-dir",
        str(run_dir),
        "--data-dir",
        str(data_dir),
        "--cache-dir",
        str(cache_dir),
    ]


def lines(run_dir: Path) -> int:
    path = run_dir / "ledger.jsonl"
    return path.read_bytes().count(b"\n") if path.exists() else 0


def summary(run_dir: Path) -> list[tuple[object, ...]]:
    return [
        (r.generation, r.program_id, r.status, r.mean_delta, r.cost_ratio, r.fingerprint)
        for r in Ledger(run_dir).records
    ]


@pytest.mark.slow  # two real search runs, one killed midway (about 50 s)
def test_sigkill_then_resume_matches_an_uninterrupted_run(tmp_path, packaged_datasets):
    cache = tmp_path / "cache"
    reference, killed = tmp_path / "reference", tmp_path / "killed"
    subprocess.run(command(reference, packaged_datasets, cache), check=True, capture_output=True)
    assert [g for g, *_ in summary(reference)] == list(range(GENERATIONS + 1))

    # Kill at two moments: right after a record lands, and in the middle of a generation.
    for wait_for, extra_delay in ((2, 0.0), (4, 0.7)):
        child = subprocess.Popen(
            command(killed, packaged_datasets, cache),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while lines(killed) < wait_for and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(extra_delay)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        done = Ledger(killed).records  # opening recovers a torn final line, if any
        assert [r.generation for r in done] == list(range(len(done)))

    finished = subprocess.run(command(killed, packaged_datasets, cache), capture_output=True)
    assert finished.returncode == 0, finished.stderr.decode()[-2000:]
    assert b"resuming" in finished.stderr
    assert summary(killed) == summary(reference)
    for record in Ledger(killed).records:
        if record.source_path:
            assert (killed / record.source_path).read_text() == (
                reference / record.source_path
            ).read_text()
