"""Sentence, paragraph and pair splitting, and chunk ownership, on hand-checked texts."""

from __future__ import annotations

import numpy as np
import pytest

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    PARAGRAPH_SENTENCES,
    Chunks,
    chunk_documents,
    sentence_pairs,
    split_paragraphs,
    split_sentences,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "Dr. Smith arrived at 3.14 p.m. on Monday. He met the U.S. ambassador, e.g. at "
            "the embassy! Was it late? Yes.",
            [
                "Dr. Smith arrived at 3.14 p.m. on Monday.",
                "He met the U.S. ambassador, e.g. at the embassy!",
                "Was it late?",
                "Yes.",
            ],
            id="english-abbreviations-decimals",
        ),
        pytest.param(
            "J. R. R. Tolkien wrote it, cf. Fig. 3 and Prof. Tolkien vs. Mr. Lewis. Done.",
            ["J. R. R. Tolkien wrote it, cf. Fig. 3 and Prof. Tolkien vs. Mr. Lewis.", "Done."],
            id="initials-and-listed-abbreviations",
        ),
        pytest.param(
            'She said "Stop." Then she left. (See above.) "Why?" she asked. Next one',
            ['She said "Stop."', "Then she left.", "(See above.)", '"Why?" she asked.', "Next one"],
            id="closing-quotes-brackets-and-lowercase-continuation",
        ),
        pytest.param(
            "Wait… what happened? Nothing... Really. Version 2.0.1 is at example.com today.",
            [
                "Wait… what happened?",
                "Nothing...",
                "Really.",
                "Version 2.0.1 is at example.com today.",
            ],
            id="ellipsis-versions-urls",
        ),
        pytest.param(
            "今天天气很好。我们去公园吧！你来吗？",
            ["今天天气很好。", "我们去公园吧！", "你来吗？"],
            id="chinese",
        ),
        pytest.param(
            "你好!我很好……我们走吧",
            ["你好!", "我很好……", "我们走吧"],
            id="chinese-ascii-punctuation-no-space",
        ),
        pytest.param(
            "今日は晴れです。「本当？」と彼は聞いた。明日も晴れるでしょう。",
            ["今日は晴れです。", "「本当？」と彼は聞いた。", "明日も晴れるでしょう。"],
            id="japanese-quote-inside-sentence",
        ),
        pytest.param(
            "मेरा नाम राम है। मैं दिल्ली में रहता हूँ॥ आप कैसे हैं?",
            ["मेरा नाम राम है।", "मैं दिल्ली में रहता हूँ॥", "आप कैसे हैं?"],
            id="hindi-danda",
        ),
        pytest.param(
            "كيف حالك؟ أنا بخير. شكرا لك۔ نعم",
            ["كيف حالك؟", "أنا بخير.", "شكرا لك۔", "نعم"],
            id="arabic-urdu",
        ),
        pytest.param(
            "ሰላም ነው። እንዴት ነህ፧ ደህና ነኝ።",
            ["ሰላም ነው።", "እንዴት ነህ፧", "ደህና ነኝ።"],
            id="amharic",
        ),
        pytest.param(
            "Բարև։ Ինչպե՞ս ես։",
            ["Բարև։", "Ինչպե՞ս ես։"],
            id="armenian-question-mark-inside-word",
        ),
        pytest.param(
            "Title\nFirst line. Second\r\n\n  third  ",
            ["Title\nFirst line.", "Second", "third"],
            id="blank-lines-split-single-line-breaks-do-not",
        ),
        pytest.param(
            "The company reported net\nincome of $5 million in\n2018. Revenue grew.",
            ["The company reported net\nincome of $5 million in\n2018.", "Revenue grew."],
            id="pdf-line-breaks-inside-a-sentence",
        ),
        pytest.param(
            "Net income\n \n$\n \n5,363\n \n(370)\n\nDepreciation\n \n1,488",
            ["Net income\n \n$\n \n5,363\n \n(370)", "Depreciation\n \n1,488"],
            id="letterless-cells-join-the-row-before",
        ),
        pytest.param("12\n\n$ 3\n\nTotal. 7", ["12\n\n$ 3\n\nTotal. 7"], id="leading-letterless"),
        pytest.param("1.\n\n2.", ["1.\n\n2."], id="no-letter-at-all"),
        pytest.param("no terminator here", ["no terminator here"], id="no-terminator"),
        # Thai ends a sentence with a space between Thai letters, not a terminator.
        pytest.param("สวัสดีครับ ผมชื่อสมชาย", ["สวัสดีครับ", "ผมชื่อสมชาย"], id="thai-space"),
        pytest.param("", [], id="empty"),
        pytest.param(" \n\t ", [], id="blank"),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_split_paragraphs_prefers_blank_line_blocks() -> None:
    text = "\n  First para, line one.\nLine two.\n\n\n   Second para.  \n \nThird.\n"
    assert split_paragraphs(text) == ["First para, line one.\nLine two.", "Second para.", "Third."]


def test_split_paragraphs_single_line_breaks_stay_inside() -> None:
    assert split_paragraphs("Line one. Still one.\n  Line two.\n") == [
        "Line one. Still one.\n  Line two."
    ]


def test_split_paragraphs_letterless_blocks_join_the_block_before() -> None:
    assert split_paragraphs("Revenue\n\n 5,363 \n\nCosts rose.") == [
        "Revenue\n\n 5,363",
        "Costs rose.",
    ]


def test_split_paragraphs_falls_back_to_sentence_windows() -> None:
    assert PARAGRAPH_SENTENCES == 4
    text = "One is here. Two is here. Three is here. Four is here. Five is here. Six is here."
    assert split_paragraphs(text) == [
        "One is here. Two is here. Three is here. Four is here.",
        "Five is here. Six is here.",
    ]


def test_split_paragraphs_windows_keep_the_original_spacing() -> None:
    assert split_paragraphs("一。二。三。四。五。") == ["一。二。三。四。", "五。"]
    assert split_paragraphs("Short one.  Short two.") == ["Short one.  Short two."]


def test_split_paragraphs_single_block_with_blank_lines_around_uses_sentences() -> None:
    assert split_paragraphs("\n\nOnly one. Block here.\n\n") == ["Only one. Block here."]


def test_split_paragraphs_empty() -> None:
    assert split_paragraphs("") == []
    assert split_paragraphs("\n \n") == []


def test_sentence_pairs() -> None:
    assert sentence_pairs(["A.", "B.", "C."]) == ["A. B.", "B. C."]
    assert sentence_pairs(["Only."]) == ["Only."]
    assert sentence_pairs([]) == []


def test_chunk_documents_owner_and_fallback() -> None:
    docs = ["One. Two. Three.", "", "  no terminator  ", "   ", "Four! Five?"]
    chunks = chunk_documents(docs, split_sentences)
    assert chunks.texts == ["One.", "Two.", "Three.", "", "no terminator", "", "Four!", "Five?"]
    np.testing.assert_array_equal(chunks.owner, [0, 0, 0, 1, 2, 3, 4, 4])
    assert chunks.owner.dtype == np.intp
    assert chunks.n_docs == 5
    np.testing.assert_array_equal(chunks.starts, [0, 3, 4, 5, 6])


def test_chunk_documents_caps_chunks_per_doc() -> None:
    chunks = chunk_documents(["One. Two. Three.", "Four."], split_sentences, max_chunks_per_doc=2)
    assert chunks.texts == ["One.", "Two.", "Four."]
    np.testing.assert_array_equal(chunks.owner, [0, 0, 1])
    assert MAX_CHUNKS_PER_DOC == 32
    with pytest.raises(ValueError, match="at least 1"):
        chunk_documents(["x"], split_sentences, max_chunks_per_doc=0)


def test_chunk_documents_segmented_maxsim() -> None:
    chunks = chunk_documents(["One. Two.", "Three.", "Four. Five. Six."], split_sentences)
    sim = np.array([[0.1, 0.5, 0.2, 0.9, 0.3, 0.4]])
    np.testing.assert_allclose(np.maximum.reduceat(sim, chunks.starts, axis=1), [[0.5, 0.2, 0.9]])


def test_chunk_documents_empty_corpus_and_input_untouched() -> None:
    empty = chunk_documents([], split_sentences)
    assert empty.texts == []
    assert empty.n_docs == 0
    assert empty.starts.shape == (0,)
    docs = ["A. B.", "C."]
    chunk_documents(docs, split_paragraphs)
    assert docs == ["A. B.", "C."]


@pytest.mark.parametrize(
    ("texts", "owner", "n_docs"),
    [
        (["a", "b"], [0], 2),  # wrong length
        (["a", "b"], [1, 0], 2),  # decreasing
        (["a", "b"], [0, 2], 3),  # document 1 owns nothing
        (["a"], [0], 2),  # last document owns nothing
        (["a"], [0], 0),  # chunks without documents
    ],
)
def test_chunks_rejects_broken_ownership(texts: list[str], owner: list[int], n_docs: int) -> None:
    with pytest.raises(ValueError):
        Chunks(texts=texts, owner=np.array(owner, dtype=np.intp), n_docs=n_docs)
