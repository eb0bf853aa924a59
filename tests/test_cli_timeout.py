"""``evaluate --program-file F --timeout 5`` ends within its limit, encodes served included.

Each command runs as its own process (``python -m embedding_ttc.cli``, with this package on
``PYTHONPATH``), on a task written in tmp and the packaged MiniLM without a cache, so every
text a program asks for is really encoded by the parent. The bound is the behaviour under
test: the grace is generous for a busy two-core machine, and far below the uncapped time
(the loop never ends; the flood asks for a million texts).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import embedding_ttc
from test_cli_first_stage import write_task

TIMEOUT = 5.0
GRACE = 10.0
"""Seconds past the limit a program's run may end (one piece of encoding, a busy machine)."""

COMMAND_GRACE = 90.0
"""Seconds the whole command may take besides the program (start-up, model, base encoding)."""

PROGRAMS = {
    "encode_loop": (
        "def program(Q, D, S, ctx):\n"
        "    i = 0\n"
        "    while True:\n"
        "        ctx.encode_fn([f'new text {i} {j}' for j in range(4)])\n"
        "        i += 1\n"
    ),
    "encode_flood": (
        "def program(Q, D, S, ctx):\n"
        "    for i in range(1000):\n"
        "        ctx.encode_fn([f'flood text {i} {j}' for j in range(1000)])\n"
        "    return S\n"
    ),
    "normal": (
        "import numpy as np\n\n"
        "def program(Q, D, S, ctx):\n"
        "    Qp = ctx.encode_fn(list(ctx.query_texts))\n"
        "    return S + 0.0 * np.float32(Qp.sum())\n"
    ),
}


def evaluate(
    tmp_path: Path, name: str, timeout: float = TIMEOUT
) -> tuple[list[dict[str, Any]], float]:
    """The ``--json`` records of ``evaluate --program-file NAME.py --timeout T``, and seconds."""
    data = write_task(tmp_path / "data")
    program = tmp_path / f"{name}.py"
    program.write_text(PROGRAMS[name], encoding="utf-8")
    src = str(Path(embedding_ttc.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src, "HF_HUB_OFFLINE": "1"}
    argv = [
        *(sys.executable, "-m", "embedding_ttc.cli", "evaluate", "--task", "mini"),
        *("--data-dir", str(data), "--program-file", str(program), "--timeout", str(timeout)),
        # The encoder budget is set out of reach: the wall time is what must stop these.
        *("--encode-budget", "1000000000", "--no-cache", "--no-progress", "--json"),
        *("--out", str(tmp_path / "out")),
    ]
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    seconds = time.monotonic() - start
    # A program that timed out is a failed run: the command exits 1 after writing the rest.
    failed = name != "normal"
    assert done.returncode == (1 if failed else 0), done.stderr
    if failed:
        assert "1 of 2 requested program runs failed" in done.stderr
    return json.loads(done.stdout), seconds


@pytest.mark.parametrize("name", ["encode_loop", "encode_flood"])
def test_a_program_that_floods_the_encoder_ends_at_its_timeout(tmp_path: Path, name: str) -> None:
    records, seconds = evaluate(tmp_path, name)
    (failure,) = [r for r in records if r.get("program") == name]
    assert failure["status"] == "timeout"
    reason = failure["reason"]
    found = re.match(
        r"timed out after ([\d.]+) s: ([\d.]+) s in the program, ([\d.]+) s serving "
        r"([\d,]+) encodes in ([\d,]+) calls? \(limit 5 s",
        reason,
    )
    assert found is not None, reason
    elapsed, own, serving = (float(found[i]) for i in (1, 2, 3))
    encodes, calls = (int(found[i].replace(",", "")) for i in (4, 5))
    assert TIMEOUT <= elapsed < TIMEOUT + GRACE
    assert own + serving == pytest.approx(elapsed, abs=0.11)
    assert serving > 0 and encodes > 0 and calls > 0
    assert encodes < 1_000_000  # the flood was cut short, not served
    assert seconds < TIMEOUT + GRACE + COMMAND_GRACE
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["sandbox_limits"] == {
        "timeout_seconds": TIMEOUT,
        "timeout_covers": "run",
        "encode_texts_per_item": 1e9,
    }


def test_a_normal_program_is_unaffected(tmp_path: Path) -> None:
    # The default limit, as a user runs it: a program that encodes its queries once is ok,
    # and scores as P0 does (it returns S).
    records, _ = evaluate(tmp_path, "normal", timeout=600.0)
    by_program = {r["program"]: r for r in records}
    assert by_program["normal"]["status"] == "ok"
    assert by_program["normal"]["program_calls"] == 3
    assert by_program["normal"]["comparison"] == by_program["P0"]["comparison"]
