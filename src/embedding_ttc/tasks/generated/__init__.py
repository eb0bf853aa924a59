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

The package: :mod:`.draw` (seeded randomness), :mod:`.facts` (pass keys and needles),
:mod:`.haystack` (word windows and insertion), :mod:`.build` (the construction),
:mod:`.loaders` (the shipped tasks over the shared datasets).
"""

from embedding_ttc.tasks.generated.build import (
    DEFAULT_LENGTHS,
    DEFAULT_SEED,
    HAYSTACK_TASK,
    RECIPE_VERSION,
    make_needle_task,
    make_passkey_task,
)
from embedding_ttc.tasks.generated.loaders import (
    GENERATED_TASKS,
    load_generated,
    load_haystack_texts,
)

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
]
