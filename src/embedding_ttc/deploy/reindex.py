"""Re-indexing the dense first stage: every segment's ANN index rewritten under a policy.

An index built under one :class:`~.ann.AnnPolicy` (8-bit lists before the 4-bit fast-scan
codes became the default, or another target recall) gets the current one without a document
being encoded again: each segment's new index is trained on, filled from and calibrated against
what the segment already holds (its ``D``, the index's calibration queries). A segment's other
files do not change, and neither do its rows, texts or the program's scores; only which
candidates the dense first stage finds, and how fast.

Each new index is written into its segment under a new name (``ann-N.faiss``), then a manifest
listing it instead of the old one is published atomically, then the old file is removed: a kill
at any point leaves the old version or the new one, and the next writer sweeps the unlisted
file (:func:`~.segment.sweep`). A process serving the old version keeps its mapped file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from embedding_ttc.deploy.ann import (
    DEFAULT_POLICY,
    AnnPolicy,
    ann_file_name,
    build_ann,
    stored_queries,
)
from embedding_ttc.deploy.build import _now, file_entries, publish_manifest
from embedding_ttc.deploy.manifest import HistoryEntry, Manifest, SegmentRecord
from embedding_ttc.deploy.recording import Progress
from embedding_ttc.deploy.segment import Segment, sweep
from embedding_ttc.durable import fsync_dir, fsync_file


def reindex_ann(
    root: Path,
    manifest: Manifest,
    segments: Sequence[Segment],
    policy: AnnPolicy = DEFAULT_POLICY,
    progress: Progress | None = None,
) -> Manifest:
    """Rewrite the ANN index of every segment of the index at ``root``; return the manifest.

    The caller holds the index's lock; ``manifest`` is the one the ``segments`` were loaded
    from. A segment below ``policy.exact_below`` documents ends with no ANN index (searched
    exactly). The index's stored calibration queries are used, else midpoints of documents.
    """
    sweep(root, manifest)
    queries = stored_queries(root, manifest)
    records: list[SegmentRecord] = []
    old_files: list[Path] = []
    for i, segment in enumerate(segments):
        if progress is not None:
            progress("ann", i, len(segments))
        record = segment.record
        directory = segment.directory
        ann = build_ann(segment.documents, directory, policy, queries, ann_file_name(directory))
        files = dict(record.files)
        if record.ann is not None:
            files.pop(record.ann.file, None)
            old_files.append(directory / record.ann.file)
        if ann is not None:
            fsync_file(directory / ann.file)
            fsync_dir(directory)
            files |= file_entries(directory, [ann.file])
        records.append(record.model_copy(update={"ann": ann, "files": dict(sorted(files.items()))}))
    history = HistoryEntry(action="ann", documents=sum(r.documents for r in records), at=_now())
    new = manifest.model_copy(update={"segments": records, "history": [*manifest.history, history]})
    publish_manifest(root, new)
    for path in old_files:
        path.unlink(missing_ok=True)
    if progress is not None:
        progress("ann", len(segments), len(segments))
    return new
