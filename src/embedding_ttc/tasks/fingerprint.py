"""A task's content hash: the same documents, queries and judgements give the same hash."""

from __future__ import annotations

import hashlib
import json

from embedding_ttc.tasks.task import RetrievalTask


def task_fingerprint(task: RetrievalTask) -> str:
    """Content hash of a task: SHA-256 over its ids, texts, judgements and pools.

    The name, source and metadata are left out: two tasks with the same documents, queries and
    judgements have the same fingerprint. Qrels and pools are hashed in sorted order.

    Args:
        task: any retrieval task.

    Returns:
        64 hexadecimal characters.

    """
    payload = {
        "doc_ids": list(task.doc_ids),
        "doc_titles": list(task.doc_titles),
        "doc_bodies": list(task.doc_bodies),
        "query_ids": list(task.query_ids),
        "query_texts": list(task.query_texts),
        "qrels": {q: dict(sorted(d.items())) for q, d in sorted(task.qrels.items())},
        "pools": None
        if task.pools is None
        else {q: list(p) for q, p in sorted(task.pools.items())},
        "exclude_self_hits": task.exclude_self_hits,
    }
    encoded = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(encoded).hexdigest()
