"""Text processing that knows its script: tokens and sentences in zh, ja, ar, ru, th, hi, en.

The tokenizer registry and its setting (context manager, environment variable), the expected
pieces of short fixed strings in each script, a seeded property test over mixed-script text,
and, on the five multilingual tasks of ``../shared/datasets``, that BM25 ranks first the
document a query was copied from under ``unicode`` (and that ``ascii`` cannot, on the scripts
it does not read).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np
import pytest
import regex

from embedding_ttc.errors import UnknownNameError
from embedding_ttc.programs.primitives import tokenizers
from embedding_ttc.programs.primitives.chunking import split_paragraphs, split_sentences
from embedding_ttc.programs.primitives.lexical import BM25, tokenize
from embedding_ttc.programs.primitives.tokenizers import (
    TOKENIZER_ENV,
    TOKENIZERS,
    get_tokenizer,
    tokenizer_name,
    use_tokenizer,
)

from shared_data import require_shared

# --- the registry and the setting -------------------------------------------------------------


def test_registry_names_and_default() -> None:
    assert {"unicode", "letters", "ascii"} <= set(TOKENIZERS.names())
    assert tokenizers.DEFAULT_TOKENIZER == "unicode"


def test_unknown_tokenizer_suggests_the_closest() -> None:
    with pytest.raises(UnknownNameError, match="Did you mean: unicode"):
        get_tokenizer("unicod")


def test_context_manager_and_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKENIZER_ENV, raising=False)
    assert tokenizer_name() == "unicode"
    assert tokenize("北京大学") == ["北京", "京大", "大学"]
    with use_tokenizer("ascii"):
        assert tokenize("北京大学 ok") == ["ok"]  # the cache is keyed on the tokenizer too
        with use_tokenizer("letters"):
            assert tokenize("北京大学") == ["北", "京", "大", "学"]
        assert tokenizer_name() == "ascii"
    monkeypatch.setenv(TOKENIZER_ENV, "letters")
    assert tokenize("北京大学") == ["北", "京", "大", "学"]
    monkeypatch.setenv(TOKENIZER_ENV, "asci")
    with pytest.raises(UnknownNameError, match="ascii"):
        tokenize("x")


def test_unspaced_block_filter_covers_every_unspaced_letter() -> None:
    every_char = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c < 0xE000)
    unspaced = regex.compile(rf"(?V1)[[{tokenizers._UNSPACED}]&&[\p{{L}}\p{{N}}\p{{M}}]]")
    found = unspaced.findall(every_char)
    assert found and [c for c in found if not tokenizers._MAY_BE_UNSPACED.match(c)] == []


# --- tokens per script ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # zh: overlapping bigrams of a Han run (Lucene CJKAnalyzer), a lone letter kept
        ("北京大学的学生。我", ["北京", "京大", "大学", "学的", "的学", "学生", "我"]),
        # ja: kana and kanji in one run; half-width katakana normalised first
        ("東京へ行く", ["東京", "京へ", "へ行", "行く"]),
        ("ｶﾀｶﾅ", ["カタ", "タカ", "カナ"]),
        # ar: harakat, tatweel removed; alef forms, alef maqsura, teh marbuta normalised
        ("أَحْمَدُ ذهب إلى المدرسة", ["احمد", "ذهب", "الي", "المدرسه"]),
        ("كتـــاب ٱلعلم آمن", ["كتاب", "العلم", "امن"]),
        # fa: a ZWNJ inside a word joins it; bidi marks vanish
        ("می\u200cخواهم \u202bسلام\u202c", ["میخواهم", "سلام"]),
        # ru
        ("Привет, Мир! Ёлка", ["привет", "мир", "ёлка"]),
        # th: bigrams of letter clusters (vowel and tone marks stay on their letter)
        ("ภาษาไทย", ["ภา", "าษ", "ษา", "าไ", "ไท", "ทย"]),
        ("ที่นี่ ดี", ["ที่นี่", "ดี"]),
        # hi: vowel signs and virama inside the word
        ("हिन्दी भाषा।", ["हिन्दी", "भाषा"]),
        # en: unchanged, and a soft hyphen or zero-width space does not split a word
        ("Hello, World! It's 3.14_x", ["hello", "world", "it", "s", "3", "14", "x"]),
        ("co\u00adoperate in\u200bside \ufeffend", ["cooperate", "inside", "end"]),
        ("BM25 in 北京 and Москва!", ["bm25", "in", "北京", "and", "москва"]),
        ("", []),
    ],
)
def test_unicode_tokens(text: str, expected: list[str]) -> None:
    with use_tokenizer("unicode"):
        assert tokenize(text) == expected


@pytest.mark.parametrize(
    ("text", "ascii_tokens", "letters_tokens"),
    [
        ("北京 Beijing", ["beijing"], ["北", "京", "beijing"]),
        ("مرحبا world", ["world"], ["مرحبا", "world"]),
        ("Café crème", ["caf", "cr", "me"], ["café", "crème"]),
    ],
)
def test_ascii_and_letters_tokens(text: str, ascii_tokens: list[str], letters_tokens: list[str]):
    with use_tokenizer("ascii"):
        assert tokenize(text) == ascii_tokens
    with use_tokenizer("letters"):
        assert tokenize(text) == letters_tokens


def test_ascii_text_tokenises_alike_under_every_tokenizer() -> None:
    text = "The U.S. Army's 2nd-best plan_B, v3.14 (draft) -- OK?"
    found = {name: get_tokenizer(name).split(text) for name in TOKENIZERS.names()}
    assert len(set(found.values())) == 1


# --- sentences and paragraphs per script ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("今天天气很好。我们去公园吧！你去吗？", ["今天天气很好。", "我们去公园吧！", "你去吗？"]),
        ("数值是３．１４，对吗。好的", ["数值是３．１４，对吗。", "好的"]),  # ． and ， do not end
        ("東京です。　大阪です。", ["東京です。", "大阪です。"]),  # full-width space
        # ar: ؟ ends a sentence, the Arabic comma does not
        ("مرحبا، كيف حالك؟ أنا بخير.", ["مرحبا، كيف حالك؟", "أنا بخير."]),
        ("Это первое. Это второе! Правда?", ["Это первое.", "Это второе!", "Правда?"]),
        # th: a space between Thai letters ends a sentence, not one around ๆ
        (
            "ผมชอบกินข้าว คุณชอบกินอะไร เด็ก ๆ ชอบเล่น",
            ["ผมชอบกินข้าว", "คุณชอบกินอะไร", "เด็ก ๆ ชอบเล่น"],
        ),
        ("ราคา 100 บาท", ["ราคา 100 บาท"]),  # a number between is not a Thai letter
        ("यह एक वाक्य है। यह दूसरा है॥ तीसरा", ["यह एक वाक्य है।", "यह दूसरा है॥", "तीसरा"]),
        ("Dr. Smith went home. He slept.", ["Dr. Smith went home.", "He slept."]),
        ("One.\u200bTwo.\u3000Three.", ["One.", "Two.", "Three."]),  # zero-width, full-width
        ("\u200b \ufeff", []),
    ],
)
def test_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_japanese_blank_lines_are_paragraphs() -> None:
    text = "本項では仏像を説明する。\n\n東大寺は寺院である。大仏で知られる。\n\n以上。"
    assert split_paragraphs(text) == [
        "本項では仏像を説明する。",
        "東大寺は寺院である。大仏で知られる。",
        "以上。",
    ]


# --- property: no empty or blank token or sentence ---------------------------------------------

_ALPHABET = (
    "北京大学东京へ行くカタカナｶﾀ"  # Han, kana, half-width
    "أَحْمَدُـإلىةٱ،؟"  # Arabic with marks, tatweel, punctuation
    "ภาษาไทยที่ๆฯ"  # Thai
    "हिन्दी।॥"  # Devanagari
    "Привет"  # Cyrillic
    "Hello.!?,;:'\"()3.14-_"  # ASCII
    "\u200b\u200c\u200d\u200e\u200f\u202a\u202e\u2066\u2069\ufeff\u00ad\u0640\u3000\u00a0"
    " \n\n\t。！？．，"
)


def test_no_script_yields_empty_or_blank_tokens_or_sentences() -> None:
    rng = random.Random(22)
    for _ in range(3000):
        text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 40)))
        for name in TOKENIZERS.names():
            for token in get_tokenizer(name).split(text):
                assert token and not token.isspace() and not regex.search(r"[\s\u200b]", token)
        for piece in [*split_sentences(text), *split_paragraphs(text)]:
            assert piece.strip(tokenizers.IGNORABLE + " \t\n\u3000\u00a0") != "", repr(text)


# --- BM25 finds the document a query was copied from, on the five shared tasks ----------------

TASKS = ["cmrc2018_zh", "jaquad_ja", "arcd_ar", "xquad_ru", "xquad_th"]
NON_LATIN = TASKS  # every one: ascii reads none of their scripts


def _corpus(task: str) -> list[str]:
    path = require_shared(f"BM25 on the multilingual task {task}") / task / "corpus.jsonl"
    if not path.is_file():
        pytest.fail(f"{path} not found: the shared datasets lack the task {task}")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [f"{r.get('title', '')} {r['text']}".strip() for r in rows]


def _copied_queries(docs: list[str], n: int = 20) -> list[tuple[int, str]]:
    """A sentence of ``n`` seeded documents as a query: 30 characters or more, in no other."""
    rng = random.Random(7)
    out: list[tuple[int, str]] = []
    for doc in rng.sample(range(len(docs)), len(docs)):
        sentences = [s for s in split_sentences(docs[doc]) if len(s) >= 30]
        query = sentences[len(sentences) // 2] if sentences else None
        if query is not None and sum(query in other for other in docs) == 1:
            out.append((doc, query))
        if len(out) == n:
            break
    return out


def _rank_one_share(docs: list[str], queries: list[tuple[int, str]]) -> float:
    scores = BM25.fit(docs).scores([q for _, q in queries])
    hits = 0
    for row, (doc, _) in enumerate(queries):
        best = np.flatnonzero(scores[row] == scores[row].max())
        hits += scores[row, doc] > 0 and best.tolist() == [doc]
    return hits / len(queries)


@pytest.mark.parametrize("task", TASKS)
def test_bm25_ranks_the_source_document_first(task: str) -> None:
    docs = _corpus(task)
    queries = _copied_queries(docs)
    assert len(queries) == 20
    with use_tokenizer("unicode"):
        assert _rank_one_share(docs, queries) == 1.0
    with use_tokenizer("ascii"):  # the test can fail: the paper's tokenizer cannot do it
        assert _rank_one_share(docs, queries) < 0.8


# --- an index refuses another tokenizer than its own ------------------------------------------


def test_an_index_refuses_to_serve_under_another_tokenizer(tmp_path: Path) -> None:
    from embedding_ttc.deploy.corpus import Document
    from embedding_ttc.deploy.errors import TokenizerMismatchError
    from embedding_ttc.deploy.index import Index
    from embedding_ttc.deploy.manifest import check_tokenizer

    from fakes import HashingEncoder

    docs = [Document(f"d{i}", "", f"document number {i} about cats") for i in range(4)]
    fixture = tmp_path / "ix"
    index = Index.build(fixture, docs, encoder=HashingEncoder(), program="P0")
    unnamed = index.manifest.model_copy(update={"tokenizer": None})
    check_tokenizer(unnamed, fixture)  # built before the field: not checked
    built = index.manifest.model_copy(update={"tokenizer": "ascii"})
    with use_tokenizer("ascii"):
        check_tokenizer(built, fixture)
    with (
        pytest.raises(TokenizerMismatchError, match=r"built with tokenizer 'ascii'.*'unicode'"),
        use_tokenizer("unicode"),
    ):
        check_tokenizer(built, fixture)
