"""Generated long-document tasks: passkey and needle retrieval, built with the LongEmbed recipe.

LongEmbed (Zhu et al., 2024, arXiv:2404.12096; MTEB ``LEMBPasskeyRetrieval`` and
``LEMBNeedleRetrieval``) has two synthetic retrieval tasks. Each of its evaluation splits fixes
one context length (256 to 32,768 tokens) and holds 100 candidate documents and 50 queries;
every query has exactly one relevant document, the other 50 documents are distractors.

* **Passkey** (adapted from *personalized passkey retrieval*): a document is filler text with one
  inserted sentence giving a named person's pass key; the query is
  ``"what is the passkey for <Name>?"`` (the format of LongEmbed's released queries).
* **Needle** (adapted from Needle-in-a-Haystack): a document is a stretch of real prose with one
  inserted factual "needle" sentence; the query is the natural question the needle answers.

What differs here, because the machine is offline: the haystack is real text handed in by the
caller (the loaders use the ``lemb_qmsum`` meeting transcripts, where LongEmbed used Paul
Graham's essays for needles and a repeated filler for pass keys), the needles come from built-in
templates rather than LongEmbed's list, and lengths are counted in whitespace words, not
tokens. One task mixes several lengths (:data:`DEFAULT_LENGTHS`); each length is a small
LongEmbed-style split with its own queried and distractor documents. MTEB's descriptive
statistics put LongEmbed's ``test_1024`` split (1,024 tokens) at about 760 words per
document, the figure in the paper's task table; pass ``lengths=(760,)`` for that single-length
variant.

Everything is a pure function of the haystack texts and the seed. Randomness comes only from
:meth:`random.Random.random` seeded with a string, the part of :mod:`random` that Python
promises to keep stable across versions.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

from embedding_ttc.errors import DatasetError, UnknownNameError
from embedding_ttc.registry import closest
from embedding_ttc.tasks.beir import find_file, iter_jsonl
from embedding_ttc.tasks.task import RetrievalTask

__all__ = [
    "DEFAULT_LENGTHS",
    "DEFAULT_SEED",
    "GENERATED_TASKS",
    "HAYSTACK_TASK",
    "RECIPE_VERSION",
    "load_generated",
    "load_haystack_texts",
    "make_needle_task",
    "make_passkey_task",
    "task_fingerprint",
]

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

T = TypeVar("T")


# ---------------------------------------------------------------------------------------------
# Randomness
# ---------------------------------------------------------------------------------------------


class _Draw:
    """Seeded draws built on ``Random.random()`` alone, so they stay stable across Pythons."""

    def __init__(self, seed: str) -> None:
        self._rng = random.Random(seed)

    def unit(self) -> float:
        """Uniform float in ``[0, 1)``."""
        return self._rng.random()

    def below(self, n: int) -> int:
        """Uniform integer in ``[0, n)``."""
        if n <= 0:
            raise ValueError("below() needs a positive bound")
        return min(int(self._rng.random() * n), n - 1)

    def choice(self, items: Sequence[T]) -> T:
        """One element of ``items``, uniformly."""
        return items[self.below(len(items))]

    def subset(self, n: int, k: int) -> list[int]:
        """``k`` distinct indices from ``range(n)``, sorted (partial Fisher-Yates)."""
        pool = list(range(n))
        for i in range(k):
            j = i + self.below(n - i)
            pool[i], pool[j] = pool[j], pool[i]
        return sorted(pool[:k])


# ---------------------------------------------------------------------------------------------
# Facts: pass keys and needles
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Fact:
    """One inserted sentence, the question it answers, and the strings that identify it.

    Every key appears in exactly one document of a generated task (its own), so the question
    has exactly one answering document.
    """

    sentence: str
    question: str
    keys: tuple[str, ...]


_FIRST_NAMES = (
    "Abigail", "Adrian", "Alice", "Amara", "Andre", "Astrid", "Beatrice", "Bruno", "Camille",
    "Cedric", "Clara", "Dalia", "Damian", "Delphine", "Desmond", "Elena", "Elias", "Esme",
    "Felix", "Fiona", "Gideon", "Greta", "Hana", "Hector", "Imogen", "Ines", "Isaac", "Ivo",
    "Jasper", "Joyce", "Julian", "Kaito", "Katrin", "Leander", "Lena", "Lucia", "Magnus",
    "Maren", "Mateo", "Mira", "Nadia", "Nathan", "Nico", "Noor", "Olga", "Oscar", "Petra",
    "Quentin", "Rafael", "Rosa", "Rufus", "Saskia", "Selim", "Sofia", "Tobias", "Ulla",
    "Vera", "Viktor", "Wanda", "Xavier", "Yara", "Yusuf", "Zelda", "Zoran",
)  # fmt: skip

_LAST_NAMES = (
    "Abbott", "Alvarez", "Bergstrom", "Blackwood", "Bradshaw", "Castellano", "Chowdhury",
    "Dahl", "Delacroix", "Eriksen", "Fairbanks", "Fontaine", "Gallagher", "Haddad",
    "Hargreaves", "Ingram", "Jankowski", "Kaminski", "Kowalczyk", "Lambert", "Lindqvist",
    "Marchetti", "Mendoza", "Munoz", "Nakamura", "Novak", "Okafor", "Oyelaran", "Pemberton",
    "Petrakis", "Quintero", "Rasmussen", "Renwick", "Sandoval", "Schreiber", "Sorensen",
    "Takahashi", "Thornbury", "Underwood", "Vasquez", "Vukovic", "Whitlock", "Yamamoto",
    "Zielinski", "Achterberg", "Bianchi", "Carrington", "Dragomir", "Esposito", "Falkner",
    "Grimaldi", "Holloway", "Iversen", "Jablonski", "Kerrigan", "Lockhart", "Moreau",
    "Nieminen", "Ostrowski", "Pellegrini", "Rosenthal", "Szabo", "Tremblay", "Van der Berg",
)  # fmt: skip

_CITIES = (
    "Lisbon", "Porto", "Valencia", "Seville", "Marseille", "Bordeaux", "Genoa", "Naples",
    "Krakow", "Gdansk", "Ljubljana", "Zagreb", "Tallinn", "Riga", "Vilnius", "Bergen",
    "Gothenburg", "Aarhus", "Antwerp", "Ghent", "Salzburg", "Bratislava", "Thessaloniki",
    "Tbilisi", "Yerevan", "Montreal", "Halifax", "Quito", "Cusco", "Valparaiso", "Oaxaca",
    "Hobart", "Dunedin", "Kyoto", "Busan", "Hanoi", "Chiang Mai", "Zanzibar", "Marrakesh",
    "Windhoek",
)  # fmt: skip

_ISLANDS = (
    "Gorse Island", "Marrow Isle", "Little Skerry", "Kelpie Rock", "Hollin Island",
    "Saltmarsh Cay", "Brackenholm", "Wrenna Isle", "Tern Holm", "Fennick Island",
    "Coppice Isle", "Ravenscar Island", "Lantern Key", "Mistle Island", "Heron Holm",
    "Brindle Isle", "Oyster Skerry", "Thistle Key", "Gannet Rock", "Quillan Island",
    "Puffin Holm", "Cormorant Isle", "Selkie Skerry", "Bramble Key", "Lapwing Island",
    "Driftwood Isle", "Kittiwake Rock", "Samphire Island", "Curlew Holm", "Foxglove Isle",
    "Pennywort Key", "Sorrel Island", "Wolfsbane Skerry", "Tamarisk Isle", "Eider Holm",
    "Marram Island", "Sandpiper Key", "Clover Isle", "Whimbrel Rock", "Bladderwrack Island",
)  # fmt: skip

_ACTIVITIES = (
    "to eat a sandwich on the old harbour wall on a sunny afternoon",
    "to walk the river path at dawn before the bakeries open",
    "to take the night tram to the end of the line and back",
    "to swim in the cold lake behind the botanical garden",
    "to rent a rowing boat and drift under the seven bridges",
    "to climb the bell tower just before the evening chimes",
    "to buy warm chestnuts from the cart outside the opera house",
    "to watch the fishing fleet come in from the breakwater",
    "to spend a rainy morning in the map room of the public library",
    "to cycle along the canal to the windmill and eat pancakes there",
)  # fmt: skip

_DISHES = ("lentil soup", "apple crumble", "fish stew", "tomato sauce", "walnut bread",
           "bean chili", "plum cake", "mushroom risotto")  # fmt: skip
_INGREDIENTS = ("a pinch of smoked paprika", "a spoonful of orange marmalade",
                "a splash of strong black coffee", "grated dark chocolate",
                "a handful of crushed juniper berries", "a little anchovy paste",
                "toasted fennel seeds", "a drop of rose water")  # fmt: skip
_FERRY_TIMES = ("a quarter past five", "ten to six", "twenty past six", "half past six",
                "a quarter to seven", "five past seven", "half past seven")  # fmt: skip
_ANIMALS = ("tortoise", "parrot", "ferret", "goat", "donkey", "goldfish", "hedgehog", "cat")
_PET_NAMES = ("Biscuit", "Admiral", "Pickle", "Marmalade", "Socrates", "Tofu", "Juniper",
              "Captain Whiskers", "Noodle", "Professor Plum")  # fmt: skip
_BUILDINGS = ("boathouse", "greenhouse", "workshop", "beach hut", "garden shed", "chapel")
_HIDING_PLACES = (
    "under the third flowerpot from the left", "inside a hollow garden gnome",
    "taped beneath the rain barrel", "in an old tea tin on the top shelf",
    "behind the loose brick by the door", "in the pocket of a yellow raincoat",
)  # fmt: skip
_INSTRUMENTS = ("cello", "accordion", "bassoon", "harp", "banjo", "oboe", "marimba", "tuba")
_VENUES = ("in the back room of a laundrette", "on the roof of the public library",
           "in a disused railway carriage", "in the crypt of a small church",
           "in the boiler room of an old hotel", "under the pier at low tide")  # fmt: skip
_COLOURS = ("red and white", "blue and yellow", "black and gold", "green and cream",
            "orange and grey", "purple and silver")  # fmt: skip


def _person(draw: _Draw) -> str:
    return f"{draw.choice(_FIRST_NAMES)} {draw.choice(_LAST_NAMES)}"


def _draw_passkey(draw: _Draw) -> _Fact:
    """Draw a named pass key: ``<Name>'s pass key is 12345. Remember it. ...``."""
    name = _person(draw)
    key = str(10_000 + draw.below(90_000))
    return _Fact(
        sentence=f"{name}'s pass key is {key}. Remember it. {key} is the pass key for {name}.",
        question=f"what is the passkey for {name}?",
        keys=(name, key),
    )


def _needle_best_thing(draw: _Draw) -> _Fact:
    city = draw.choice(_CITIES)
    return _Fact(
        sentence=f"The best thing to do in {city} is {draw.choice(_ACTIVITIES)}.",
        question=f"What is the best thing to do in {city}?",
        keys=(city,),
    )


def _needle_ingredient(draw: _Draw) -> _Fact:
    person, dish = _person(draw), draw.choice(_DISHES)
    return _Fact(
        sentence=f"The secret ingredient in {person}'s {dish} is {draw.choice(_INGREDIENTS)}.",
        question=f"What is the secret ingredient in {person}'s {dish}?",
        keys=(person,),
    )


def _needle_ferry(draw: _Draw) -> _Fact:
    island = draw.choice(_ISLANDS)
    return _Fact(
        sentence=f"The first ferry to {island} leaves at {draw.choice(_FERRY_TIMES)} every "
        "morning except Sundays.",
        question=f"When does the first ferry to {island} leave?",
        keys=(island,),
    )


def _needle_pet(draw: _Draw) -> _Fact:
    person, animal = _person(draw), draw.choice(_ANIMALS)
    return _Fact(
        sentence=f"{person} has a pet {animal} called {draw.choice(_PET_NAMES)}.",
        question=f"What is the name of {person}'s pet {animal}?",
        keys=(person,),
    )


def _needle_hidden_key(draw: _Draw) -> _Fact:
    person, building = _person(draw), draw.choice(_BUILDINGS)
    return _Fact(
        sentence=f"{person} keeps the spare key to the {building} {draw.choice(_HIDING_PLACES)}.",
        question=f"Where does {person} keep the spare key to the {building}?",
        keys=(person,),
    )


def _needle_rehearsal(draw: _Draw) -> _Fact:
    person, instrument = _person(draw), draw.choice(_INSTRUMENTS)
    return _Fact(
        sentence=f"{person} practises the {instrument} {draw.choice(_VENUES)}.",
        question=f"Where does {person} practise the {instrument}?",
        keys=(person,),
    )


def _needle_lighthouse(draw: _Draw) -> _Fact:
    island = draw.choice(_ISLANDS)
    return _Fact(
        sentence=f"The lighthouse on {island} is painted in {draw.choice(_COLOURS)} stripes.",
        question=f"What colours is the lighthouse on {island} painted?",
        keys=(island,),
    )


_NEEDLE_TEMPLATES: tuple[Callable[[_Draw], _Fact], ...] = (
    _needle_best_thing,
    _needle_ingredient,
    _needle_ferry,
    _needle_pet,
    _needle_hidden_key,
    _needle_rehearsal,
    _needle_lighthouse,
)


def _draw_needle(draw: _Draw) -> _Fact:
    """Draw a needle sentence from one of the built-in templates, with its question."""
    return draw.choice(_NEEDLE_TEMPLATES)(draw)


# ---------------------------------------------------------------------------------------------
# Haystack windows
# ---------------------------------------------------------------------------------------------

_WORD = re.compile(r"\S+")
_SENTENCE_END = (".", "?", "!")


class _Haystack:
    """The haystack texts, cut into word windows.

    A window is a run of consecutive words from one text, starting at a line start where the
    text allows. When no text is long enough, the texts are joined and repeated so that short
    haystacks (tests, tiny inputs) still give windows of any length.
    """

    def __init__(self, texts: Sequence[str], max_words: int) -> None:
        self._texts = [t for t in texts if t.strip()]
        if not self._texts:
            raise ValueError("the haystack has no words")
        self._counts = [len(t.split()) for t in self._texts]
        self._parsed: dict[int, tuple[list[tuple[int, int]], list[int]]] = {}
        self._stream_words = 0
        if max(self._counts) < max_words:
            joined = "\n".join(self._texts)
            self._stream_words = len(joined.split())
            repeats = -(-max_words // self._stream_words) + 1
            self._texts.append("\n".join([joined] * repeats))
            self._counts.append(-1)  # never eligible as an ordinary text

    def _parse(self, index: int) -> tuple[list[tuple[int, int]], list[int]]:
        """Word spans of text ``index`` and the indices of words that begin a line."""
        if index not in self._parsed:
            text = self._texts[index]
            spans = [m.span() for m in _WORD.finditer(text)]
            line_starts = [
                i
                for i in range(len(spans))
                if i == 0 or "\n" in text[spans[i - 1][1] : spans[i][0]]
            ]
            self._parsed[index] = (spans, line_starts)
        return self._parsed[index]

    def window(self, draw: _Draw, n_words: int) -> str:
        """Draw ``n_words`` consecutive words (original whitespace kept)."""
        eligible = [i for i, c in enumerate(self._counts) if c >= n_words]
        if eligible:
            index = draw.choice(eligible)
            last_start = self._counts[index] - n_words
        else:  # the joined, repeated stream: start anywhere in its first copy
            index = len(self._texts) - 1
            last_start = self._stream_words - 1
        spans, line_starts = self._parse(index)
        n_starts = bisect.bisect_right(line_starts, last_start)
        start = line_starts[draw.below(n_starts)] if n_starts else draw.below(last_start + 1)
        text = self._texts[index]
        return text[spans[start][0] : spans[start + n_words - 1][1]]


def _first_words(text: str, n_words: int) -> str:
    """Return the first ``n_words`` words of ``text`` (original whitespace kept)."""
    if n_words == 0:
        return ""
    ends = [m.end() for m in itertools.islice(_WORD.finditer(text), n_words)]
    return text[: ends[-1]]


def _insert(window: str, sentence: str, depth: float) -> tuple[str, float]:
    """Insert ``sentence`` on its own line at the boundary nearest to ``depth`` (0..1).

    Boundaries are line breaks and sentence ends, as Needle-in-a-Haystack backs up to a sentence
    end; the window's start and end always count. Returns the text and the realised depth.
    """
    spans = [m.span() for m in _WORD.finditer(window)]
    n = len(spans)
    if n == 0:
        return sentence, 0.0
    candidates = [0, n]
    for b in range(1, n):
        gap = window[spans[b - 1][1] : spans[b][0]]
        if "\n" in gap or window[spans[b - 1][1] - 1] in _SENTENCE_END:
            candidates.append(b)
    target = depth * n
    b = min(sorted(candidates), key=lambda c: abs(c - target))
    if b == 0:
        return f"{sentence}\n{window}", 0.0
    if b == n:
        return f"{window}\n{sentence}", 1.0
    before, after = window[: spans[b - 1][1]], window[spans[b][0] :]
    return f"{before}\n{sentence}\n{after}", b / n


# ---------------------------------------------------------------------------------------------
# Task builder
# ---------------------------------------------------------------------------------------------


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
    draw: _Draw,
    drawer: Callable[[_Draw], _Fact],
    haystack_lower: str,
    chosen: list[_Fact],
    used_keys: set[str],
) -> _Fact:
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
    drawer: Callable[[_Draw], _Fact],
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
    draw = _Draw(f"{RECIPE_VERSION}/{kind}/{seed}")
    haystack = _Haystack(haystack_texts, max(lengths))
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
    facts: list[_Fact] = []
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
        body, depth = _insert(_first_words(window, length - fact_words), fact.sentence, draw.unit())
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
        _draw_passkey,
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
        _draw_needle,
        haystack_texts,
        name=name,
        seed=seed,
        lengths=lengths,
        n_docs=n_docs,
        n_queries=n_queries,
        haystack_name=haystack_name,
    )


# ---------------------------------------------------------------------------------------------
# Fingerprint
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Loaders over the shared datasets
# ---------------------------------------------------------------------------------------------


def load_haystack_texts(data_root: Path, task: str = HAYSTACK_TASK) -> list[str]:
    """Read the document texts of a BEIR-layout task as haystack, in file order.

    Only ``corpus.jsonl`` is read, and only its ``text`` field.

    Args:
        data_root: the folder holding the shared task folders.
        task: the haystack task's folder name.

    Returns:
        The documents' texts.

    Raises:
        DatasetError: the folder or its ``corpus.jsonl`` is missing, a line is not a JSON object
            with a string ``text``, or the corpus is empty.

    """
    folder = Path(data_root) / task
    if not folder.is_dir():
        raise DatasetError(
            f"the generated long-document tasks need the haystack task folder {folder} "
            f"('{task}', BEIR layout), which does not exist"
        )
    corpus = find_file(folder, "corpus.jsonl")
    texts: list[str] = []
    for line_no, record in iter_jsonl(corpus):
        text = record.get("text")
        if not isinstance(text, str):
            raise DatasetError(f"{corpus}:{line_no}: no string field 'text'")
        texts.append(text)
    if not texts:
        raise DatasetError(f"{corpus} holds no documents")
    return texts


_MAKERS: dict[str, Callable[..., RetrievalTask]] = {
    "lemb_passkey": make_passkey_task,
    "lemb_needle": make_needle_task,
}


def load_generated(name: str, data_root: Path) -> RetrievalTask:
    """Build a shipped generated task (default seed and lengths) from the shared datasets.

    Args:
        name: ``"lemb_passkey"`` or ``"lemb_needle"``.
        data_root: the folder holding the shared task folders; the haystack is
            ``data_root / "lemb_qmsum" / "corpus.jsonl"``.

    Returns:
        The generated task.

    Raises:
        UnknownNameError: ``name`` is not a generated task.
        DatasetError: the haystack task is missing or malformed.

    """
    if name not in _MAKERS:
        near = closest(name, list(_MAKERS))
        hint = f" Did you mean: {', '.join(near)}?" if near else ""
        raise UnknownNameError(
            f"unknown generated task {name!r}.{hint} Known: {', '.join(sorted(_MAKERS))}"
        )
    texts = load_haystack_texts(data_root, HAYSTACK_TASK)
    return _MAKERS[name](texts, name=name, haystack_name=HAYSTACK_TASK)


def _load_passkey(data_root: Path) -> RetrievalTask:
    return load_generated("lemb_passkey", data_root)


def _load_needle(data_root: Path) -> RetrievalTask:
    return load_generated("lemb_needle", data_root)


GENERATED_TASKS: dict[str, Callable[[Path], RetrievalTask]] = {
    "lemb_passkey": _load_passkey,
    "lemb_needle": _load_needle,
}
"""Generated task name -> loader taking the shared datasets folder."""
