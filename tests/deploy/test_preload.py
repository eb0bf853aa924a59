"""``serve --preload`` reads every file of an index once, and nothing else."""

from __future__ import annotations

from embedding_ttc.deploy.corpus import Document
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.preload import index_files, preload

from . import corpus
from fakes import HashingEncoder


def test_preload_reads_every_file_the_manifest_lists_in_every_segment(tmp_path):
    encoder = HashingEncoder()
    index = Index.build(tmp_path / "ix", corpus(), encoder=encoder, program="SentMaxSim")
    index = index.add([Document("late", "", "A late document. About cats.")], encoder=encoder)
    root = index.directory
    (root / "segments" / "notes.txt").write_text("not part of the index")
    on_disk = {
        p for p in root.rglob("*") if p.is_file() and p.name not in ("manifest.json", "notes.txt")
    }
    assert set(index_files(root, index.manifest)) == on_disk
    assert len(index.manifest.segments) == 2
    assert preload(root, index.manifest) == sum(p.stat().st_size for p in on_disk)
