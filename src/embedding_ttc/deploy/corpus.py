"""Documents and queries for a deployed index: corpus files, duplicate checks, query samples.

A corpus file is read by :mod:`embedding_ttc.tasks.corpus_records` (BEIR or Pyserini JSONL,
explicit fields, or TSV); queries are JSONL (``text``) or one a line. A corpus without queries
gets pseudo-queries (the first sentence of sampled documents) for the recording pass of a
build and, when no real queries are given, for the reference sample of batch-statistics
programs.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

from embedding_ttc.errors import DatasetError
from embedding_ttc.programs.primitives.chunking import split_sentences
from embedding_ttc.tasks.corpus_records import Document as Document  # re-exported
from embedding_ttc.tasks.corpus_records import read_corpus_file
from embedding_ttc.tasks.jsonl import iter_jsonl

PSEUDO_QUERY_WORDS = 16
"""Words a pseudo-query keeps of its document's first sentence."""


def read_corpus(path: Path | str) -> list[Document]:
    """Read a corpus file's documents, refusing any invalid record (see :mod:`corpus_records`).

    Raises:
        DatasetError: naming the file, line and field of a bad record, or a duplicate id.

    """
    docs = read_corpus_file(path).documents
    check_new_documents(docs, set(), str(path))
    return docs


def read_queries(path: Path | str) -> list[str]:
    """Query texts from JSONL (``text`` field) or a plain text file (one query a line)."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"query file {path} does not exist")
    if path.name.endswith((".jsonl", ".jsonl.gz")):
        out = []
        for lineno, obj in iter_jsonl(path):
            text = obj.get("text")
            if not isinstance(text, str):
                raise DatasetError(f"{path}:{lineno}: missing string field 'text'")
            out.append(text)
        return [t for t in out if t.strip()]
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip()]


def check_new_documents(docs: Sequence[Document], existing: set[str], where: str) -> None:
    """Raise :class:`DatasetError` on an empty list or an id given twice or already indexed."""
    if not docs:
        raise DatasetError(f"{where}: no documents")
    seen: set[str] = set()
    for doc in docs:
        if doc.id in existing:
            raise DatasetError(f"{where}: document id {doc.id!r} is already in the index")
        if doc.id in seen:
            raise DatasetError(f"{where}: duplicate document id {doc.id!r}")
        seen.add(doc.id)


def sample_texts(texts: Sequence[str], n: int, seed: int = 0) -> list[str]:
    """A seeded sample of ``n`` distinct non-blank texts (all of them if fewer), in input order."""
    pool = list(dict.fromkeys(t for t in texts if t.strip()))
    if len(pool) <= n:
        return pool
    keep = sorted(random.Random(seed).sample(range(len(pool)), n))
    return [pool[i] for i in keep]


def pseudo_queries(docs: Sequence[Document], n: int, seed: int = 0) -> list[str]:
    """Stand-in queries for a corpus without any: the first sentence of sampled documents.

    Each is cut to :data:`PSEUDO_QUERY_WORDS` words; used for the recording pass and, when no
    real queries are given, as the reference sample of batch-statistics programs.
    """
    out = []
    for text in sample_texts([d.joined for d in docs], n, seed):
        first = (split_sentences(text) or [text])[0]
        out.append(" ".join(first.split()[:PSEUDO_QUERY_WORDS]))
    return out
