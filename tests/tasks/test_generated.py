"""Generated LongEmbed-style tasks: shape, one answering document per query, determinism."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from embedding_ttc.errors import DatasetError, UnknownNameError
from embedding_ttc.tasks.fingerprint import task_fingerprint
from embedding_ttc.tasks.generated import (
    DEFAULT_LENGTHS,
    DEFAULT_SEED,
    GENERATED_TASKS,
    HAYSTACK_TASK,
    RECIPE_VERSION,
    load_generated,
    load_haystack_texts,
    make_needle_task,
    make_passkey_task,
)
from embedding_ttc.tasks.task import RetrievalTask

TINY_HAYSTACK = [
    "The grass is green. The sky is blue.\nThe sun is yellow. Here we go.",
    "There and back again.",
]

# Fingerprint of make_passkey_task(TINY_HAYSTACK, lengths=(64, 128)). It pins the recipe: if a
# change alters it on purpose, bump RECIPE_VERSION and update this value.
TINY_PASSKEY_FINGERPRINT = "c50a99d206acdfd8e661a518711d5a43a10c48c4447b9ebf82e156fc651154c4"


def _occurs(key: str, text: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(key.lower()) + r"(?!\w)", text.lower()) is not None


def _length_of(doc_id: str) -> int:
    match = re.fullmatch(r"len(\d+)_doc\d+", doc_id)
    assert match, doc_id
    return int(match.group(1))


def assert_well_formed(task: RetrievalTask, lengths: tuple[int, ...]) -> None:
    """The invariants every generated task must satisfy."""
    assert task.n_docs == 100
    assert task.n_queries == 50
    assert len(set(task.doc_ids)) == 100
    assert task.source == "generated"
    bodies = dict(zip(task.doc_ids, task.doc_bodies, strict=True))
    facts = task.metadata["facts"]
    assert set(facts) == set(task.doc_ids)

    # Every query: exactly one relevant document, grade 1, holding the fact that answers it;
    # neither the fact nor its identifying keys occur in any other document.
    for query_id, question in zip(task.query_ids, task.query_texts, strict=True):
        judgements = task.qrels[query_id]
        assert len(judgements) == 1
        ((doc_id, grade),) = judgements.items()
        assert grade == 1 and isinstance(grade, int)
        fact = facts[doc_id]
        assert fact["queried"] is True
        assert fact["question"] == question
        assert fact["sentence"] in bodies[doc_id]
        assert fact["keys"]
        for key in fact["keys"]:
            assert _occurs(key, bodies[doc_id])
        for other_id, body in bodies.items():
            if other_id == doc_id:
                continue
            assert fact["sentence"] not in body, (query_id, other_id)
            for key in fact["keys"]:
                assert not _occurs(key, body), (query_id, key, other_id)

    # The other 50 documents are distractors with their own (unasked) facts.
    relevant = {d for judgements in task.qrels.values() for d in judgements}
    distractors = [d for d in task.doc_ids if d not in relevant]
    assert len(relevant) == 50 and len(distractors) == 50
    for doc_id in distractors:
        assert facts[doc_id]["queried"] is False
        assert facts[doc_id]["sentence"] in bodies[doc_id]
    assert len({f["sentence"] for f in facts.values()}) == 100

    # Lengths as declared: exact word counts, documents and queries spread evenly.
    assert tuple(task.metadata["lengths"]) == lengths
    for doc_id, body in bodies.items():
        assert len(body.split()) == _length_of(doc_id)
    per_length = Counter(_length_of(d) for d in task.doc_ids)
    assert set(per_length) == set(lengths)
    assert max(per_length.values()) - min(per_length.values()) <= 1
    queried_per_length = Counter(_length_of(d) for d in relevant)
    assert max(queried_per_length.values()) - min(queried_per_length.values()) <= 1
    assert task.stats()["mean_doc_words"] == pytest.approx(
        sum(_length_of(d) for d in task.doc_ids) / 100
    )


def assert_passkey_queries(task: RetrievalTask) -> None:
    """Passkey queries name a person whose pass key sentence is in the relevant document only."""
    bodies = dict(zip(task.doc_ids, task.doc_bodies, strict=True))
    keys = set()
    for query_id, question in zip(task.query_ids, task.query_texts, strict=True):
        match = re.fullmatch(r"what is the passkey for (.+)\?", question)
        assert match, question
        name = match.group(1)
        pattern = re.compile(
            re.escape(name)
            + r"'s pass key is (\d{5})\. Remember it\. \1 is the pass key for "
            + re.escape(name)
            + r"\."
        )
        (doc_id,) = task.qrels[query_id]
        found = pattern.search(bodies[doc_id])
        assert found, (question, doc_id)
        keys.add(found.group(1))
        assert all(name not in body for d, body in bodies.items() if d != doc_id)
    assert len(keys) == task.n_queries


# -- the shared haystack (lemb_qmsum) -----------------------------------------------------------


@pytest.fixture(scope="module")
def shared_root(shared_datasets: Path) -> Path:
    """The shared datasets (conftest fails without ../shared/datasets), with the haystack task."""
    corpus = shared_datasets / HAYSTACK_TASK / "corpus.jsonl"
    if not corpus.is_file():
        pytest.fail(
            f"these tests need the shared datasets at ../shared/datasets; {corpus} is missing"
        )
    return shared_datasets


@pytest.fixture(scope="module")
def haystack(shared_root: Path) -> list[str]:
    return load_haystack_texts(shared_root)


@pytest.fixture(scope="module")
def shipped(shared_root: Path) -> dict[str, RetrievalTask]:
    return {name: loader(shared_root) for name, loader in GENERATED_TASKS.items()}


def test_registry_names_the_two_tasks() -> None:
    assert set(GENERATED_TASKS) == {"lemb_passkey", "lemb_needle"}


@pytest.mark.parametrize("name", ["lemb_passkey", "lemb_needle"])
def test_shipped_task_is_well_formed(shipped: dict[str, RetrievalTask], name: str) -> None:
    task = shipped[name]
    assert task.name == name
    assert_well_formed(task, DEFAULT_LENGTHS)
    assert task.stats()["mean_doc_words"] == 750.0


def test_shipped_passkey_queries(shipped: dict[str, RetrievalTask]) -> None:
    assert_passkey_queries(shipped["lemb_passkey"])


def test_shipped_needle_questions_name_their_subject(shipped: dict[str, RetrievalTask]) -> None:
    task = shipped["lemb_needle"]
    facts = task.metadata["facts"]
    for query_id, question in zip(task.query_ids, task.query_texts, strict=True):
        (doc_id,) = task.qrels[query_id]
        assert question.endswith("?")
        assert all(key in question for key in facts[doc_id]["keys"])
    assert len(set(task.query_texts)) == task.n_queries


@pytest.mark.parametrize("name", ["lemb_passkey", "lemb_needle"])
def test_metadata_records_provenance(shipped: dict[str, RetrievalTask], name: str) -> None:
    meta = shipped[name].metadata
    assert meta["seed"] == DEFAULT_SEED
    assert meta["lengths"] == list(DEFAULT_LENGTHS)
    assert meta["haystack_task"] == HAYSTACK_TASK
    assert meta["recipe"] == RECIPE_VERSION
    assert meta["docs_per_length"] == {str(n): 25 for n in DEFAULT_LENGTHS}
    assert sorted(meta["queries_per_length"].values()) == [12, 12, 13, 13]
    assert len(meta["haystack_sha256"]) == 64
    json.dumps(dict(meta))  # plain, JSON-serialisable provenance


def test_documents_are_cut_from_the_haystack(
    shipped: dict[str, RetrievalTask], haystack: list[str]
) -> None:
    task = shipped["lemb_needle"]
    facts = task.metadata["facts"]
    for doc_id, body in zip(task.doc_ids, task.doc_bodies, strict=True):
        pieces = [line for line in body.split("\n") if line != facts[doc_id]["sentence"]]
        longest = max(pieces, key=len)
        assert any(longest in text for text in haystack), doc_id


def test_two_builds_are_identical(haystack: list[str]) -> None:
    for make in (make_passkey_task, make_needle_task):
        first, second = make(haystack), make(haystack)
        assert task_fingerprint(first) == task_fingerprint(second)
        assert first == second


def test_loader_matches_direct_build(
    shipped: dict[str, RetrievalTask], haystack: list[str]
) -> None:
    direct = make_passkey_task(haystack, haystack_name=HAYSTACK_TASK)
    assert task_fingerprint(direct) == task_fingerprint(shipped["lemb_passkey"])


def test_a_different_seed_gives_a_different_task(haystack: list[str]) -> None:
    base = make_needle_task(haystack)
    other = make_needle_task(haystack, seed=DEFAULT_SEED + 1)
    assert task_fingerprint(base) != task_fingerprint(other)
    assert base.doc_bodies != other.doc_bodies
    assert base.query_texts != other.query_texts


def test_passkey_and_needle_use_different_windows(shipped: dict[str, RetrievalTask]) -> None:
    passkey, needle = shipped["lemb_passkey"], shipped["lemb_needle"]
    assert passkey.doc_bodies[0][:200] != needle.doc_bodies[0][:200]


def test_single_length_variant(haystack: list[str]) -> None:
    task = make_passkey_task(haystack, lengths=(760,))
    assert_well_formed(task, (760,))
    assert task.stats()["mean_doc_words"] == 760.0


# -- a tiny in-test haystack ----------------------------------------------------------------------


def test_tiny_haystack_builds_both_tasks() -> None:
    passkey = make_passkey_task(TINY_HAYSTACK, lengths=(64, 128))
    needle = make_needle_task(TINY_HAYSTACK, lengths=(64, 128))
    for task in (passkey, needle):
        assert_well_formed(task, (64, 128))
        assert task.stats()["mean_doc_words"] == 96.0
        assert task.metadata["haystack_task"] == "inline"
    assert_passkey_queries(passkey)
    assert "The grass is green." in passkey.doc_bodies[0]


def test_tiny_haystack_is_deterministic_and_pinned() -> None:
    first = make_passkey_task(TINY_HAYSTACK, lengths=(64, 128))
    second = make_passkey_task(list(TINY_HAYSTACK), lengths=(64, 128))
    assert task_fingerprint(first) == task_fingerprint(second)
    assert task_fingerprint(first) == TINY_PASSKEY_FINGERPRINT


def test_tiny_haystack_seed_changes_task() -> None:
    a = make_passkey_task(TINY_HAYSTACK, lengths=(64,), seed=1)
    b = make_passkey_task(TINY_HAYSTACK, lengths=(64,), seed=2)
    assert task_fingerprint(a) != task_fingerprint(b)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"lengths": ()}, "at least one"),
        ({"lengths": (64, 64)}, "distinct"),
        ({"lengths": (0,)}, "positive"),
        ({"lengths": (10,)}, "too short"),
        ({"n_queries": 101}, "n_queries"),
        ({"n_docs": 1, "lengths": (64, 128)}, "cannot cover"),
    ],
)
def test_bad_arguments_are_rejected(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_passkey_task(TINY_HAYSTACK, **kwargs)  # type: ignore[arg-type]


def test_empty_haystack_is_rejected() -> None:
    with pytest.raises(ValueError, match="no words"):
        make_needle_task(["", "  \n"])


# -- fingerprint ------------------------------------------------------------------------------


def test_fingerprint_tracks_content_not_name() -> None:
    task = make_passkey_task(TINY_HAYSTACK, lengths=(64,), n_docs=4, n_queries=2)
    renamed = make_passkey_task(TINY_HAYSTACK, lengths=(64,), n_docs=4, n_queries=2, name="x")
    assert task_fingerprint(task) == task_fingerprint(renamed)
    (query_id,) = task.query_ids[:1]
    (doc_id,) = task.qrels[query_id]
    regraded = RetrievalTask(
        name=task.name,
        doc_ids=task.doc_ids,
        doc_titles=task.doc_titles,
        doc_bodies=task.doc_bodies,
        query_ids=task.query_ids,
        query_texts=task.query_texts,
        qrels={**task.qrels, query_id: {doc_id: 2}},
    )
    assert task_fingerprint(regraded) != task_fingerprint(task)
    assert re.fullmatch(r"[0-9a-f]{64}", task_fingerprint(task))


# -- loader errors ----------------------------------------------------------------------------


def test_missing_haystack_task_names_the_folder(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=re.escape(str(tmp_path / HAYSTACK_TASK))):
        load_generated("lemb_passkey", tmp_path)
    with pytest.raises(DatasetError, match=re.escape(str(tmp_path / HAYSTACK_TASK))):
        GENERATED_TASKS["lemb_needle"](tmp_path)


def test_malformed_haystack_line_is_reported(tmp_path: Path) -> None:
    folder = tmp_path / HAYSTACK_TASK
    folder.mkdir()
    (folder / "corpus.jsonl").write_text(
        json.dumps({"_id": "a", "title": "", "text": "fine"}) + "\n{not json\n", encoding="utf-8"
    )
    with pytest.raises(DatasetError, match=r"corpus\.jsonl:2"):
        load_generated("lemb_needle", tmp_path)


def test_small_haystack_folder_loads(tmp_path: Path) -> None:
    folder = tmp_path / HAYSTACK_TASK
    folder.mkdir()
    lines = [
        json.dumps({"_id": str(i), "title": "", "text": t}) for i, t in enumerate(TINY_HAYSTACK)
    ]
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert load_haystack_texts(tmp_path) == TINY_HAYSTACK
    task = load_generated("lemb_passkey", tmp_path)
    assert task.metadata["haystack_task"] == HAYSTACK_TASK
    assert task.n_docs == 100


def test_unknown_generated_task_suggests_names(tmp_path: Path) -> None:
    with pytest.raises(UnknownNameError, match="lemb_passkey"):
        load_generated("lemb_paskey", tmp_path)
