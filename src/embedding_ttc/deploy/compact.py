"""Compacting an index: every segment merged into one, then the old ones removed.

The merged segment holds the documents in index order (so rows, ids and scores of held
documents do not move), each store text once (the first segment holding it gives its
embedding, as lookups do), the chunk tables renumbered, and one BM25 index fitted over every
document: the corpus-wide statistics that per-segment indexes approximate (as the shards of
Lucene and Elasticsearch do) until the next compaction. It is written as a new segment, then a
manifest listing only it is published atomically, then the old segments are removed: a kill
at any point leaves the old version or the new one, and the next writer sweeps the rest.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.deploy.ann import DEFAULT_POLICY, AnnPolicy, stored_queries
from embedding_ttc.deploy.build import _manifest, _now, publish_manifest
from embedding_ttc.deploy.corpus import Document
from embedding_ttc.deploy.manifest import Counts, HistoryEntry, Manifest, check_tokenizer
from embedding_ttc.deploy.recording import ChunkTable, Progress
from embedding_ttc.deploy.segment import (
    Segment,
    SegmentContent,
    next_segment_name,
    publish_segment,
    sweep,
)
from embedding_ttc.deploy.store import StoreKey


def _merged_groups(
    segments: Sequence[Segment],
) -> tuple[
    dict[StoreKey, tuple[list[str], list[NDArray[np.float32]]]],
    list[dict[StoreKey, NDArray[np.intp]]],
]:
    """Every store key's texts (first holder wins) and, per segment, its rows' merged rows."""
    groups: dict[StoreKey, tuple[list[str], list[NDArray[np.float32]]]] = {}
    where: dict[StoreKey, dict[str, int]] = {}
    remaps: list[dict[StoreKey, NDArray[np.intp]]] = []
    for segment in segments:
        remap = {}
        for key, group in segment.store.groups.items():
            texts, parts = groups.setdefault(key, ([], []))
            seen = where.setdefault(key, {})
            rows = np.empty(len(group.texts), dtype=np.intp)
            new = []
            for i, text in enumerate(group.texts):
                row = seen.get(text)
                if row is None:
                    row = seen[text] = len(texts)
                    texts.append(text)
                    new.append(i)
                rows[i] = row
            if new:
                parts.append(np.asarray(group.embeddings[new], dtype=np.float32))
            remap[key] = rows
        remaps.append(remap)
    return groups, remaps


def _merged_chunks(
    segments: Sequence[Segment], remaps: list[dict[StoreKey, NDArray[np.intp]]]
) -> list[ChunkTable]:
    tables: dict[str, tuple[StoreKey, list[NDArray[np.intp]], list[NDArray[np.intp]]]] = {}
    start = 0
    for segment, remap in zip(segments, remaps, strict=True):
        for chunk in segment.record.chunks:
            group = segment.record.store[chunk.group]
            key = (group.view, group.dim, group.max_length)
            base = segment.directory / chunk.file
            owner = np.load(f"{base}.owner.npy").astype(np.intp) + start
            rows = remap[key][np.load(f"{base}.rows.npy").astype(np.intp)]
            _, owners, rows_all = tables.setdefault(chunk.artifact, (key, [], []))
            owners.append(owner)
            rows_all.append(rows)
        start += segment.size
    return [
        (label, key, np.concatenate(owners), np.concatenate(rows))
        for label, (key, owners, rows) in tables.items()
    ]


def compact_index(
    root: Path,
    manifest: Manifest,
    segments: Sequence[Segment],
    progress: Progress | None = None,
    ann: AnnPolicy = DEFAULT_POLICY,
) -> Manifest:
    """Merge the ``segments`` of the index at ``root`` into one; return the new manifest.

    The caller holds the index's lock; ``manifest`` is the one the segments were loaded from
    (all of its segments, in order).
    """
    check_tokenizer(manifest, root)
    sweep(root, manifest)
    if progress is not None:
        progress("compact", 0, 1)
    groups, remaps = _merged_groups(segments)
    docs: Iterator[Document] = chain.from_iterable(s.documents_iter() for s in segments)
    content = SegmentContent(
        docs=docs,
        documents=[s.documents for s in segments],
        groups=groups,
        chunks=_merged_chunks(segments, remaps),
        analyse=bool(segments) and all(s.analyses is not None for s in segments),
        queries=stored_queries(root, manifest),
    )
    name = next_segment_name(root, manifest)
    segment = publish_segment(root, name, content, manifest.encoder.dim, ann)
    n = segment.documents
    fields = {
        "source": manifest.source,
        "program": manifest.program,
        "counts": Counts(
            documents=n,
            store_rows=sum(r.rows for r in segment.store),
            index_encodes=manifest.counts.index_encodes,
            reference_queries=manifest.counts.reference_queries,
            ann_queries=manifest.counts.ann_queries,
        ),
        "observed": manifest.observed,
        "reference": manifest.reference,
        "history": [*manifest.history, HistoryEntry(action="compact", documents=n, at=_now())],
    }
    new = _manifest(manifest.encoder, [segment], manifest.files, fields)
    publish_manifest(root, new)
    sweep(root, new)  # the old segments (and a converted index's root files)
    if progress is not None:
        progress("compact", 1, 1)
    return new
