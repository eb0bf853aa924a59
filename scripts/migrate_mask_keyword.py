"""Rewrite the committed programs to pass the mask of ``rrf`` and ``fuse`` by keyword, once.

``rrf(channels, *, mask, k, ties)`` and ``fuse(channels, weights, *, mask, method)`` take the
candidate mask by keyword only since 0.1.0 (a positional second argument meant the mask to
one and the weights to the other). The programs the studies committed under ``results/``
called ``rrf(channels, mask, k=RRF_K)``; this script rewrites them in place, with
:func:`~embedding_ttc.search.precheck.mask_keyword.name_mask` (names inserted in front of
the positional arguments, no other byte changed), and then every record that names them:

* program files (``*.py``): the calls;
* OpenEvolve's checkpoint programs (``openevolve/checkpoints/*/programs/*.json``): their
  ``code`` (what a resumed OpenEvolve run evaluates); the prompts and replies stay as the
  model saw and wrote them;
* the sha256 of a rewritten file, wherever a record holds it (transfer cells'
  ``source_sha256``, run manifests' ``sha256``);
* the structural fingerprint of a rewritten program in ledger lines (``fingerprint``), so
  that a ledger and its program files agree.

Ledger replies, reasons and notes are records of what a model wrote and stay as written; a
program file that does not parse (a failed draft kept as written) is left as it is.

Every rewritten program parses to the tree of the old one with the mask moved to a keyword,
and calls the same function with the same arguments; running the script again changes
nothing.

Usage::

    python scripts/migrate_mask_keyword.py [ROOT]   # default: results/
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

from embedding_ttc.search.novelty import fingerprint, structure
from embedding_ttc.search.precheck.mask_keyword import name_mask

REPO = Path(__file__).resolve().parents[1]
RECORDS = (".json", ".jsonl", ".md", ".tsv", ".csv")
_FINGERPRINT = re.compile(r'("fingerprint":\s*")([0-9a-f]{16})(")')


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _shape(source: str) -> str | None:
    try:
        return fingerprint(structure(source))
    except SyntaxError:
        return None


class Migration:
    """The rewrites of one tree, and the digests and fingerprints they change."""

    def __init__(self) -> None:
        self.files = 0
        self.calls = 0
        self.digests: dict[str, str] = {}
        self.prints: dict[str, str] = {}

    def program(self, path: Path) -> None:
        """Rewrite one program file; remember its old and new digest and fingerprint."""
        data = path.read_bytes()
        old = data.decode("utf-8")
        new, notes = name_mask(old)
        if not notes:
            return
        path.write_bytes(new.encode("utf-8"))
        self.files += 1
        self.calls += len(notes)
        self.digests[_sha(data)] = _sha(new.encode("utf-8"))
        self._print(old, new)

    def checkpoint(self, path: Path) -> None:
        """Rewrite the ``code`` of an OpenEvolve checkpoint program, in place in its JSON."""
        text = path.read_text(encoding="utf-8")
        code = json.loads(text).get("code")
        if not isinstance(code, str):
            return
        new, notes = name_mask(code)
        if not notes:
            return
        for ensure_ascii in (False, True):
            before = '"code": ' + json.dumps(code, ensure_ascii=ensure_ascii)
            if text.count(before) == 1:
                after = '"code": ' + json.dumps(new, ensure_ascii=ensure_ascii)
                rewritten = text.replace(before, after)
                break
        else:
            raise SystemExit(f"{path}: its code is not written as json.dumps writes it")
        if json.loads(rewritten)["code"] != new:
            raise SystemExit(f"{path}: the rewritten code does not read back")
        path.write_text(rewritten, encoding="utf-8")
        self.files += 1
        self.calls += len(notes)
        self._print(code, new)

    def _print(self, old: str, new: str) -> None:
        before, after = _shape(old), _shape(new)
        if before is None or after is None or before == after:
            return
        if self.prints.setdefault(before, after) != after:
            raise SystemExit(f"fingerprint {before} would map to two new fingerprints")

    def record(self, path: Path) -> bool:
        """Rewrite the digests and fingerprints a record holds; whether it changed."""
        text = path.read_text(encoding="utf-8")
        new = text
        for old, now in self.digests.items():
            new = new.replace(old, now)
        if self.prints:
            new = _FINGERPRINT.sub(lambda m: m[1] + self.prints.get(m[2], m[2]) + m[3], new)
        if new == text:
            return False
        path.write_text(new, encoding="utf-8")
        return True


def migrate(root: Path) -> Migration:
    """Rewrite every program under ``root``, then every record that names one."""
    migration = Migration()
    for path in sorted(root.rglob("*.py")):
        migration.program(path)
    for path in sorted(root.rglob("openevolve/checkpoints/*/programs/*.json")):
        migration.checkpoint(path)
    records = 0
    for path in sorted(p for p in root.rglob("*") if p.suffix in RECORDS and p.is_file()):
        records += migration.record(path)
    print(
        f"{migration.files} programs ({migration.calls} calls) rewritten; "
        f"{records} records updated ({len(migration.digests)} digests, "
        f"{len(migration.prints)} fingerprints)",
        file=sys.stderr,
    )
    return migration


def main(argv: list[str] | None = None) -> int:
    """Migrate the tree the command line names (``results/`` by default)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("root", nargs="?", type=Path, default=REPO / "results")
    args = parser.parse_args(argv)
    migrate(args.root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
