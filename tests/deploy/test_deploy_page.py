"""docs/deploy.md, executed: every shell block in one shell, then every Python block, as written.

The page promises that each of its commands and code blocks runs on a fresh clone offline, in
order. The shell blocks run as one bash script (the service the first starts answers the
later ones; the last stops it) in a scratch directory that looks like a clone: its ``.venv`` is
this interpreter's environment, ``results`` and ``benchmarks`` are the repository's (the page
reads a program file and runs a benchmark from them), and everything else is what the page
writes (the page's ``pip install`` is the one step skipped: the test's environment has the
serve extra). Each Python block then runs alone there; each adapter's block needs its framework's
extra (the dev environment has them), and the PyTerrier block is skipped, with the reason,
where ``pyterrier`` is not installed. The
``yaml`` block (Kubernetes probes) is configuration, not a command.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "deploy.md"
FENCE = re.compile(r"^```(bash|python)\n(.*?)^```", re.S | re.M)

pytest.importorskip("fastapi", reason="the serve extra is part of the dev extra")


def blocks(kind: str) -> list[str]:
    return [body for lang, body in FENCE.findall(PAGE.read_text()) if lang == kind]


def test_the_page_has_its_blocks_and_needs_no_unpackaged_task():
    assert len(blocks("bash")) == 7 and len(blocks("python")) == 4
    for body in blocks("bash") + blocks("python"):
        assert "scifact" not in body.replace("data fetch scifact", "")
        assert "--task" not in body or "--task legal_summarization" in body


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> tuple[Path, str, str]:
    """The scratch clone after every shell block ran, with the shell's stdout and stderr."""
    root = tmp_path_factory.mktemp("clone")
    (root / ".venv").symlink_to(Path(sys.prefix))
    for name in ("results", "benchmarks"):
        (root / name).symlink_to(REPO / name)
    script = "\n".join(
        line for body in blocks("bash") for line in body.splitlines() if "pip install" not in line
    )
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script + "\nwait\n"],
        cwd=root, env={**os.environ, "HF_HUB_OFFLINE": "1"}, capture_output=True, text=True,
        timeout=1500,
    )  # fmt: skip
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    return root, done.stdout, done.stderr


@pytest.mark.slow
def test_every_shell_block_of_the_deploy_page_runs(clone):
    _, out, err = clone
    assert out.count('"results"') >= 3  # /search, /rerank, /v1/rerank
    assert '{"results":[{"id":"tosdr032","score":0.855' in out  # the answer the page quotes
    assert '"relevance_score"' in out and '"raw_score"' in out
    assert out.count('"status":"ok"') == 3  # /health: once served, after index add, workers
    assert '"documents":447' in out  # the two new documents, swapped in while serving
    assert "skipped 1 invalid record(s) of more.tsv" in err
    assert "program g0013" in err
    assert "median of 5 requests; legal_summarization" in out


@pytest.mark.slow
@pytest.mark.parametrize("number", range(4))
def test_every_python_block_of_the_deploy_page_runs(clone, number):
    root = clone[0]
    body = blocks("python")[number]
    if "pyterrier" in body and importlib.util.find_spec("pyterrier") is None:
        pytest.skip("the PyTerrier block needs the pyterrier extra (pip install -e '.[pyterrier]')")
    done = subprocess.run(
        [sys.executable, "-c", body], cwd=root, env={**os.environ, "HF_HUB_OFFLINE": "1"},
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), "every block prints what it shows"
