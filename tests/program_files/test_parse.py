"""Reply parsing: every shape of reply a model writes, and the metadata in prose or docstring."""

from __future__ import annotations

import ast

from embedding_ttc.program_files.parse import ParsedReply, parse_reply

PROGRAM = '''\
"""ZBlend: z-scored blend of S with its column z-score.

Novelty: blends row and column z-scores of S in one pass.
Hypothesis: removing document hubness helps every task.
Parent: g0003
Root-cause analysis: g0002 lost on short queries.
Forensics: versus g0003, wins on FinQA.
"""

import numpy as np


def program(Q, D, S, ctx):
    return S - S.mean(axis=0, keepdims=True)
'''

HELPER = """\
def helper(x):
    return x * 2
"""


def fenced(code: str, lang: str = "python", fence: str = "```") -> str:
    return f"{fence}{lang}\n{code}{fence}\n"


def test_python_fence_with_prose_before_and_after():
    reply = "Here is my idea.\n\n" + fenced(PROGRAM) + "\nI expect gains on long documents.\n"
    parsed = parse_reply(reply)
    assert parsed.source == PROGRAM
    assert parsed.novelty == "blends row and column z-scores of S in one pass."
    assert parsed.hypothesis == "removing document hubness helps every task."
    assert parsed.parent_id == "g0003"


def test_fence_without_language():
    parsed = parse_reply("Program:\n" + fenced(PROGRAM, lang=""))
    assert parsed.source == PROGRAM


def test_tilde_fence_and_py_language():
    assert parse_reply(fenced(PROGRAM, lang="py", fence="~~~")).source == PROGRAM


def test_longer_fence_keeps_inner_backticks():
    code = PROGRAM.replace("return S", "# see ```code``` above\n    return S")
    assert parse_reply(fenced(code, fence="````")).source == code


def test_several_blocks_choose_the_one_defining_program():
    reply = (
        "First a helper:\n"
        + fenced(HELPER)
        + "A shell line:\n"
        + fenced("pip install numpy\n", lang="bash")
        + "Then the program:\n"
        + fenced(PROGRAM)
        + "And an example call:\n"
        + fenced("print(program(Q, D, S, ctx))\n")
    )
    assert parse_reply(reply).source == PROGRAM


def test_several_blocks_defining_program_take_the_last():
    draft = PROGRAM.replace("S.mean(axis=0", "S.max(axis=0")
    reply = "Draft:\n" + fenced(draft) + "Final version:\n" + fenced(PROGRAM)
    assert parse_reply(reply).source == PROGRAM


def test_no_block_defines_program_but_one_python_block():
    reply = "Output:\n" + fenced("42\n", lang="text") + "Code:\n" + fenced(HELPER)
    assert parse_reply(reply).source == HELPER


def test_no_block_defines_program_and_two_python_blocks_is_no_source():
    reply = fenced(HELPER) + fenced(HELPER.replace("2", "3"))
    assert parse_reply(reply).source is None


def test_unterminated_final_fence_runs_to_the_end():
    reply = "Sure.\n```python\n" + PROGRAM
    assert parse_reply(reply).source == PROGRAM


def test_pure_code_without_fence():
    for code in (PROGRAM, "import numpy as np\n\n\n" + PROGRAM.split("import numpy as np\n")[1]):
        parsed = parse_reply("\n\n" + code)
        assert parsed.source == code
        ast.parse(parsed.source)
    bare = "def program(Q, D, S, ctx):\n    return S.copy()\n"
    assert parse_reply(bare).source == bare


def test_prose_without_code_is_no_source():
    parsed = parse_reply("I think we should try Rocchio feedback next.\nNovelty: none yet.")
    assert parsed.source is None
    assert parsed.novelty == "none yet."


def test_metadata_in_prose_markdown_bold_and_case_insensitive():
    code = "import numpy as np\n\n\ndef program(Q, D, S, ctx):\n    return S.copy()\n"
    reply = (
        "**Novelty:** first program to vote across adapters.\n"
        "- **HYPOTHESIS**: adapters disagree where the ranking is wrong.\n"
        "## parent: `g0012`.\n\n" + fenced(code)
    )
    parsed = parse_reply(reply)
    assert parsed == ParsedReply(
        source=code,
        novelty="first program to vote across adapters.",
        hypothesis="adapters disagree where the ranking is wrong.",
        parent_id="g0012",
    )


def test_docstring_metadata_wins_over_prose():
    reply = "Novelty: a prose claim.\nParent: g0001\n" + fenced(PROGRAM)
    parsed = parse_reply(reply)
    assert parsed.novelty == "blends row and column z-scores of S in one pass."
    assert parsed.parent_id == "g0003"


def test_values_continue_over_wrapped_lines_until_the_next_key():
    code = (
        '"""Wrapped.\n\nHypothesis: the first line\n    continues here\nand ends here.\n'
        'Parent: none\n"""\n\n\ndef program(Q, D, S, ctx):\n    return S.copy()\n'
    )
    parsed = parse_reply(fenced(code))
    assert parsed.hypothesis == "the first line continues here and ends here."
    assert parsed.parent_id is None
    assert parsed.novelty == ""


def test_missing_metadata():
    code = "def program(Q, D, S, ctx):\n    return S.copy()\n"
    assert parse_reply(fenced(code)) == ParsedReply(code, "", "", None)


def test_parent_spellings():
    for written, expected in [
        ("g0004 (the SoftCentroid variant)", "g0004"),
        ("**g0000-P0**", "g0000-P0"),
        ("None", None),
        ("n/a", None),
        ("—", None),
        ("P0", "P0"),
    ]:
        assert parse_reply(f"Parent: {written}\n").parent_id == expected, written


def test_windows_line_endings():
    reply = ("Novelty: crlf\r\n" + fenced(PROGRAM)).replace("\n", "\r\n")
    parsed = parse_reply(reply)
    assert parsed.source == PROGRAM
    assert "\r" not in parsed.source


def test_tabs_in_indentation_are_expanded_and_strings_kept():
    code = 'def program(Q, D, S, ctx):\n\tsep = "a\tb"\n\tif True:\n\t\treturn S.copy()\n'
    parsed = parse_reply(fenced(code))
    assert parsed.source is not None
    assert parsed.source.splitlines()[1] == '    sep = "a\tb"'
    assert parsed.source.splitlines()[3] == "        return S.copy()"
    ast.parse(parsed.source)


def test_fence_indented_in_a_list_item():
    indented = "".join(f"   {line}\n" if line else "\n" for line in PROGRAM.splitlines())
    reply = "1. The program:\n   ```python\n" + indented + "   ```\n"
    parsed = parse_reply(reply)
    assert parsed.source == PROGRAM


def test_empty_block_is_no_source():
    assert parse_reply("```python\n```\n").source is None


def test_unparsable_source_still_yields_header_metadata():
    code = '"""Broken.\n\nNovelty: half-written.\n"""\n\ndef program(Q, D, S, ctx)\n    return S\n'
    parsed = parse_reply(fenced(code))
    assert parsed.source == code
    assert parsed.novelty == "half-written."
