"""scripts/migrate_mask_keyword.py: committed programs pass the mask of rrf and fuse by keyword.

The script rewrites the calls, then the records that name a rewritten program (its sha256,
its ledger fingerprint, OpenEvolve's checkpoint code); a second run changes nothing, and every
committed program and ledger is already as it leaves them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from types import ModuleType

import pytest

from embedding_ttc.search.novelty import fingerprint, structure
from embedding_ttc.search.precheck.mask_keyword import name_mask

from .scripts import load_script

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "results"

OLD = '''"""A committed program, as it was written."""

from embedding_ttc.programs.primitives.scores import RRF_K, candidate_mask, rrf


def program(Q, D, S, ctx):
    mask = candidate_mask(*S.shape, ctx.candidates)
    return rrf([S, S], mask, k=RRF_K)  # the fusion
'''
NEW = OLD.replace("rrf([S, S], mask, k=RRF_K)", "rrf([S, S], mask=mask, k=RRF_K)")


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return load_script("migrate_mask_keyword")


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def shape(text: str) -> str:
    return fingerprint(structure(text))


def test_programs_and_the_records_naming_them_are_rewritten_once(script, tmp_path):
    run = tmp_path / "search"
    (run / "programs").mkdir(parents=True)
    (run / "programs" / "g0001.py").write_text(OLD, encoding="utf-8")
    (run / "programs" / "g0002.py").write_text("def program(:\n rrf(x, mask)\n", encoding="utf-8")
    line = {"program_id": "g0001", "fingerprint": shape(OLD), "reply": "rrf([S, S], mask)"}
    (run / "ledger.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    cell = tmp_path / "cells" / "enc" / "task" / "g0001.json"
    cell.parent.mkdir(parents=True)
    cell.write_text(json.dumps({"source_sha256": sha(OLD)}, indent=2), encoding="utf-8")
    checkpoint = run / "openevolve" / "checkpoints" / "checkpoint_2" / "programs" / "x.json"
    checkpoint.parent.mkdir(parents=True)
    prompt = {"user": "rrf(channels, mask)"}
    checkpoint.write_text(json.dumps({"code": OLD, "prompts": prompt}, indent=2), encoding="utf-8")

    done = script.migrate(tmp_path)

    assert (done.files, done.calls) == (2, 2)
    assert (run / "programs" / "g0001.py").read_text(encoding="utf-8") == NEW
    # A draft that never parsed stays as the model wrote it.
    assert (run / "programs" / "g0002.py").read_text(encoding="utf-8").endswith("rrf(x, mask)\n")
    ledger = json.loads((run / "ledger.jsonl").read_text(encoding="utf-8"))
    assert ledger == {**line, "fingerprint": shape(NEW)} and shape(NEW) != shape(OLD)
    assert json.loads(cell.read_text(encoding="utf-8")) == {"source_sha256": sha(NEW)}
    assert json.loads(checkpoint.read_text(encoding="utf-8")) == {"code": NEW, "prompts": prompt}
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    again = script.migrate(tmp_path)
    assert (again.files, again.calls, again.digests) == (0, 0, {})
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_every_committed_program_passes_the_mask_by_keyword():
    programs = sorted(RESULTS.rglob("*.py"))
    assert len(programs) > 400
    positional = [p for p in programs if name_mask(p.read_text(encoding="utf-8"))[1]]
    assert positional == []


def test_every_committed_ledger_fingerprints_its_program_files():
    checked = 0
    for ledger in sorted(RESULTS.rglob("ledger.jsonl")):
        for text in ledger.read_text(encoding="utf-8").splitlines():
            line = json.loads(text)
            path = ledger.parent / "programs" / f"{line['program_id']}.py"
            if line.get("fingerprint") and path.is_file():
                assert shape(path.read_text(encoding="utf-8")) == line["fingerprint"], path
                checked += 1
    assert checked > 1000
