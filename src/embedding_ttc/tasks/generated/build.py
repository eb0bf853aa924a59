"""The LongEmbed-style construction of passkey and needle tasks over a haystack."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

from embedding_ttc.tasks.generated.draw import Draw
from embedding_ttc.tasks.generated.facts import Fact, draw_needle, draw_passkey
from embedding_ttc.tasks.generated.haystack import Haystack, first_words, insert
from embedding_ttc.tasks.task import RetrievalTask

RECIPE_VERSION = "longembed-generated/1"
"""Bump when a change alters generated tasks for the same texts and seed (caches key on it)."""

DEFAULT_LENGTHS: tuple[int, ...] = (200, 400, 800, 1600)
"""Document lengths in words: a doubling ladder like LongEmbed's 256-2,048-token splits.

With 25 documents at each length the mean is 750 words, close to the paper's table
(LEMBPasskey about 759 words, LEMBNeedle about 769).
"""

DEFAULT_SEED = 20240417
"""The fixed seed of the shipped tasks (the date of the LongEmbed preprint, v0417)."""

HAYSTACK_TASK = "lemb_qmsum"
"""The shared task whose documents (meeting transcripts) are the haystack."""

N_DOCS = 100
N_QUERIES = 50
_MAX_DRAWS = 10_000


def _split_evenly(total: int, parts: int) -> list[int]:
    """``total`` items over ``parts`` groups; the first groups take the remainder."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def _occurs(key: str, text_lower: str) -> bool:
    """Whether ``key`` occurs in ``text_lower`` as a whole word sequence, ignoring case."""
    lowered = key.lower()
    if lowered not in text_lower:  # fast path: plain substring search
        return False
    pattern = r"(?<!\w)" + re.escape(lowered) + r"(?!\w)"
    return re.search(pattern, text_lower) is not None


def _texts_digest(texts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for text in texts:
        data = text.encode("utf-8")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


def _check_arguments(lengths: Sequence[int], n_docs: int, n_queries: int) -> None:
    if not lengths:
        raise ValueError("lengths must name at least one document length")
    if any(not isinstance(n, int) or n <= 0 for n in lengths):
        raise ValueError(f"lengths must be positive integers (word counts), got {lengths!r}")
    if len(set(lengths)) != len(lengths):
        raise ValueError(f"lengths must be distinct, got {lengths!r}")
    if n_docs < len(lengths):
        raise ValueError(f"n_docs={n_docs} cannot cover {len(lengths)} lengths")
    if not 1 <= n_queries <= n_docs:
        raise ValueError(f"n_queries must be between 1 and n_docs={n_docs}, got {n_queries}")


def _draw_fact(
    draw: Draw,
    drawer: Callable[[Draw], Fact],
    haystack_lower: str,
    chosen: list[Fact],
    used_keys: set[str],
) -> Fact:
    """Draw a fact whose keys are new, absent from the haystack and from earlier facts."""
    for _ in range(_MAX_DRAWS):
        fact = drawer(draw)
        lowered = fact.sentence.lower()
        if any(k.lower() in used_keys for k in fact.keys):
            continue
        if any(_occurs(k, haystack_lower) for k in fact.keys):
            continue
        if any(_occurs(k, f.sentence.lower()) for k in fact.keys for f in chosen):
            continue
        if any(_occurs(k, lowered) for k in used_keys):
            continue
        return fact
    raise ValueError("could not draw a fact absent from the haystack; is the haystack too small?")


def _build(
    kind: str,
    drawer: Callable[[Draw], Fact],
    haystack_texts: Sequence[str],
    *,
    name: str,
    seed: int,
    lengths: Sequence[int],
    n_docs: int,
    n_queries: int,
    haystack_name: str,
) -> RetrievalTask:
    """Shared LongEmbed-style construction for passkey and needle tasks."""
    lengths = tuple(lengths)
    _check_arguments(lengths, n_docs, n_queries)
    draw = Draw(f"{RECIPE_VERSION}/{kind}/{seed}")
    haystack = Haystack(haystack_texts, max(lengths))
    docs_per_length = _split_evenly(n_docs, len(lengths))
    queries_per_length = _split_evenly(n_queries, len(lengths))

    # 1. Slots: (length, index within length, queried?) and one full-length window each.
    slots: list[tuple[int, int, bool]] = []
    for length, n_d, n_q in zip(lengths, docs_per_length, queries_per_length, strict=True):
        asked = set(draw.subset(n_d, n_q))
        slots.extend((length, j, j in asked) for j in range(n_d))
    windows = [haystack.window(draw, length) for length, _, _ in slots]

    # 2. Facts: one per document, each identifiable only in its own document.
    haystack_lower = "\n".join(windows).lower()
    facts: list[Fact] = []
    used_keys: set[str] = set()
    for _ in slots:
        fact = _draw_fact(draw, drawer, haystack_lower, facts, used_keys)
        facts.append(fact)
        used_keys.update(k.lower() for k in fact.keys)

    # 3. Documents: cut each window so the fact brings it to exactly its length; insert.
    doc_ids: list[str] = []
    bodies: list[str] = []
    query_ids: list[str] = []
    query_texts: list[str] = []
    qrels: dict[str, dict[str, int]] = {}
    fact_records: dict[str, dict[str, Any]] = {}
    for (length, j, queried), window, fact in zip(slots, windows, facts, strict=True):
        fact_words = len(fact.sentence.split())
        if fact_words >= length:
            raise ValueError(f"length {length} is too short for a {fact_words}-word fact")
        width = max(2, len(str(docs_per_length[lengths.index(length)] - 1)))
        doc_id = f"len{length}_doc{j:0{width}d}"
        body, depth = insert(first_words(window, length - fact_words), fact.sentence, draw.unit())
        doc_ids.append(doc_id)
        bodies.append(body)
        fact_records[doc_id] = {
            "sentence": fact.sentence,
            "question": fact.question,
            "keys": list(fact.keys),
            "depth": round(depth, 4),
            "queried": queried,
        }
        if queried:
            query_id = f"len{length}_query{j:0{width}d}"
            query_ids.append(query_id)
            query_texts.append(fact.question)
            qrels[query_id] = {doc_id: 1}

    words = [len(b.split()) for b in bodies]
    metadata: dict[str, Any] = {
        "recipe": RECIPE_VERSION,
        "kind": kind,
        "seed": seed,
        "lengths": list(lengths),
        "length_unit": "words",
        "docs_per_length": dict(zip(map(str, lengths), docs_per_length, strict=True)),
        "queries_per_length": dict(zip(map(str, lengths), queries_per_length, strict=True)),
        "haystack_task": haystack_name,
        "haystack_docs": len(haystack_texts),
        "haystack_sha256": _texts_digest(haystack_texts),
        "mean_doc_words": round(sum(words) / len(words), 1),
        "facts": fact_records,
    }
    return RetrievalTask(
        name=name,
        doc_ids=tuple(doc_ids),
        doc_titles=("",) * len(doc_ids),
        doc_bodies=tuple(bodies),
        query_ids=tuple(query_ids),
        query_texts=tuple(query_texts),
        qrels=MappingProxyType(qrels),
        source="generated",
        metadata=MappingProxyType(metadata),
    )


def make_passkey_task(
    haystack_texts: Sequence[str],
    *,
    name: str = "lemb_passkey",
    seed: int = DEFAULT_SEED,
    lengths: Sequence[int] = DEFAULT_LENGTHS,
    n_docs: int = N_DOCS,
    n_queries: int = N_QUERIES,
    haystack_name: str = "inline",
) -> RetrievalTask:
    """Build a LongEmbed-style passkey retrieval task over the given haystack.

    Every document is a window of haystack words with one inserted sentence
    ``"<Name>'s pass key is <12345>. Remember it. <12345> is the pass key for <Name>."`` at a
    seeded depth (snapped to a line break or sentence end). Queries ask
    ``"what is the passkey for <Name>?"``; each has exactly one relevant document (grade 1).
    Documents are split evenly over ``lengths``, and so are queries, so every length is a
    small LongEmbed split with its own distractors (documents with their own pass keys that no
    query asks for). Names and keys are drawn so that each occurs in one document only, never
    in the haystack.

    With the defaults (100 documents at 200, 400, 800 and 1,600 words, 50 queries) the mean
    document length is 750 words, in the region of the paper's LEMBPasskey (about 759 words).

    Args:
        haystack_texts: filler texts; windows are cut from them (texts shorter than a window
            are joined and repeated).
        name: task name.
        seed: generation seed; the task is a pure function of the texts and the seed.
        lengths: document lengths in whitespace-separated words (fact sentence included).
        n_docs: number of documents, split evenly over the lengths.
        n_queries: number of queries (documents with a queried fact), split evenly too.
        haystack_name: provenance label recorded in the metadata.

    Returns:
        The task, ``source="generated"``; its metadata records the recipe version, seed,
        lengths, haystack name and digest, and each document's fact and insertion depth.

    Raises:
        ValueError: bad lengths or counts, an empty haystack, or a length too short for the
            fact sentence.

    """
    return _build(
        "passkey",
        draw_passkey,
        haystack_texts,
        name=name,
        seed=seed,
        lengths=lengths,
        n_docs=n_docs,
        n_queries=n_queries,
        haystack_name=haystack_name,
    )


def make_needle_task(
    haystack_texts: Sequence[str],
    *,
    name: str = "lemb_needle",
    seed: int = DEFAULT_SEED,
    lengths: Sequence[int] = DEFAULT_LENGTHS,
    n_docs: int = N_DOCS,
    n_queries: int = N_QUERIES,
    haystack_name: str = "inline",
) -> RetrievalTask:
    """Build a LongEmbed-style needle-in-a-haystack retrieval task over the given haystack.

    Every document is a window of haystack words with one inserted "needle": a factual sentence
    from a built-in template (the best thing to do in a city, a ferry time, a person's pet, ...),
    at a seeded depth snapped to a line break or sentence end. The query is the question the
    needle answers, so each query has exactly one relevant document (grade 1); the subject of
    each needle (city, island, person) appears in that document only. Documents and queries are
    split evenly over ``lengths`` as in :func:`make_passkey_task`.

    With the defaults (100 documents at 200, 400, 800 and 1,600 words, 50 queries) the mean
    document length is 750 words, in the region of the paper's LEMBNeedle (about 769 words).

    Args:
        haystack_texts: real prose to hide needles in; windows are cut from it.
        name: task name.
        seed: generation seed; the task is a pure function of the texts and the seed.
        lengths: document lengths in whitespace-separated words (needle included).
        n_docs: number of documents, split evenly over the lengths.
        n_queries: number of queries, split evenly over the lengths.
        haystack_name: provenance label recorded in the metadata.

    Returns:
        The task, ``source="generated"``, with metadata as for :func:`make_passkey_task`.

    Raises:
        ValueError: bad lengths or counts, an empty haystack, or a length too short for a
            needle sentence.

    """
    return _build(
        "needle",
        draw_needle,
        haystack_texts,
        name=name,
        seed=seed,
        lengths=lengths,
        n_docs=n_docs,
        n_queries=n_queries,
        haystack_name=haystack_name,
    )
