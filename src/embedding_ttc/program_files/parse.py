"""Reading a proposer's reply: the program source and its Novelty / Hypothesis / Parent claims.

Models answer in many shapes. :func:`parse_reply` accepts:

* fenced blocks opened by three or more backticks or tildes, with a language (``python``,
  ``py``, ``python3``) or without one, anywhere among prose;
* several blocks: the one that defines ``def program(`` wins, the last such if several do;
  if none does, the single Python block (language ``python``/``py``, or else the single
  unlabelled block) is taken; otherwise there is no program;
* a final fence that is never closed (the reply was cut off): the block runs to the end;
* no fence at all, when the whole reply is code (it starts with ``import``, ``from``,
  ``def`` or a docstring quote);
* Windows line endings; tab indentation, expanded to four columns (leading whitespace only,
  so tabs inside strings are kept).

Metadata lines ``Novelty:``, ``Hypothesis:`` and ``Parent:`` are looked up first in the
program's module docstring (where the prompt asks for them), then in the prose around the
code; the key is case-insensitive and may be markdown-decorated (``**Novelty:**``,
``- **Parent**: g0004``, ``## Hypothesis:``). A value continues over the following lines until
a blank line, a fence or the next ``Key:`` line. Missing metadata is ``""`` (``None`` for the
parent; so are ``none``, ``n/a`` and ``-``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["ParsedReply", "parse_reply"]

TAB_COLUMNS = 4
"""Columns a tab in leading whitespace expands to (editors' and models' usual width)."""

_PYTHON_LANGS = frozenset({"python", "py", "python3", "py3"})
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*)$")
_DEFINES_PROGRAM = re.compile(r"^[ \t]*def[ \t]+program[ \t]*\(", re.MULTILINE)
_CODE_START = re.compile(r"(?:import\s|from\s+\S+\s+import\s|def\s|\"\"\"|''')")
_DECOR = r"[ \t>*_#-]*"  # markdown around a key: list bullets, bold, headings, quotes
_KEY_LINE = re.compile(
    rf"^{_DECOR}(?P<key>[A-Za-z][A-Za-z -]{{0,40}}?)[ \t]*(?:\*\*|__)?[ \t]*:(?:\*\*|__)?"
    r"[ \t]*(?P<value>.*)$"
)
_KNOWN_KEYS = frozenset(
    {"novelty", "hypothesis", "parent", "root cause analysis", "forensics", "genome"}
)
_NO_PARENT = frozenset({"", "none", "null", "n/a", "na", "-", "—", "nothing"})


@dataclass(frozen=True)
class ParsedReply:
    """What a reply contained.

    Attributes:
        source: the program file's source (newline-terminated), or ``None`` when the reply
            holds no program.
        novelty: the ``Novelty:`` claim, or ``""``.
        hypothesis: the ``Hypothesis:`` claim, or ``""``.
        parent_id: the ``Parent:`` program id, or ``None``.

    """

    source: str | None
    novelty: str
    hypothesis: str
    parent_id: str | None


@dataclass(frozen=True)
class FencedBlock:
    """A fenced code block of a reply: its info string's language, its lines joined."""

    lang: str
    code: str
    start: int  # first line of the block (the opening fence), in the reply's lines
    end: int  # one past the last line (the closing fence, when there is one)


def parse_reply(text: str) -> ParsedReply:
    """Extract the program and its claims from a model's reply (rules in the module docstring).

    Args:
        text: the whole reply.

    Returns:
        The parsed reply; ``source`` is ``None`` when no program could be identified.

    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks = fenced_blocks(lines)
    chosen = _choose(blocks)
    if chosen is not None:
        source: str | None = _finish(chosen.code)
        prose = "\n".join(lines[: chosen.start] + lines[chosen.end :])
    elif not blocks and _CODE_START.match("\n".join(lines).lstrip()):
        source = _finish("\n".join(lines))
        prose = ""
    else:
        source = None
        prose = "\n".join(lines)
    places = ([_docstring(source)] if source is not None else []) + [prose]
    parent = _first(places, "parent")
    return ParsedReply(
        source=source,
        novelty=_first(places, "novelty"),
        hypothesis=_first(places, "hypothesis"),
        parent_id=_parent_id(parent),
    )


def fenced_blocks(lines: list[str]) -> list[FencedBlock]:
    """Every fenced block, in order; an unterminated last block runs to the end."""
    blocks: list[FencedBlock] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"].expandtabs(TAB_COLUMNS))
        lang = opening["info"].strip().split(" ")[0].lower() if opening["info"].strip() else ""
        j = i + 1
        while j < len(lines) and not _closes(lines[j], fence):
            j += 1
        body = [_outdent(line, indent) for line in lines[i + 1 : j]]
        blocks.append(
            FencedBlock(lang=lang, code="\n".join(body), start=i, end=min(j + 1, len(lines)))
        )
        i = j + 1
    return blocks


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return (
        len(stripped) >= len(fence)
        and set(stripped) == {fence[0]}  # only fence characters, nothing after them
    )


def _outdent(line: str, indent: int) -> str:
    """Remove up to ``indent`` columns of leading whitespace (a fence nested in a list item)."""
    if indent == 0:
        return line
    expanded = _expand_indent(line)
    width = len(expanded) - len(expanded.lstrip(" "))
    return expanded[min(width, indent) :]


def _choose(blocks: list[FencedBlock]) -> FencedBlock | None:
    defining = [b for b in blocks if _DEFINES_PROGRAM.search(b.code)]
    if defining:
        return defining[-1]
    python = [b for b in blocks if b.lang in _PYTHON_LANGS]
    if not python:
        python = [b for b in blocks if b.lang == ""]
    return python[0] if len(python) == 1 else None


def _finish(code: str) -> str | None:
    """Expand leading tabs, drop trailing blank lines; ``None`` for an empty block."""
    lines = [_expand_indent(line).rstrip() for line in code.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines) + "\n" if lines else None


def _expand_indent(line: str) -> str:
    body = line.lstrip(" \t")
    return line[: len(line) - len(body)].expandtabs(TAB_COLUMNS) + body


def _docstring(source: str) -> str:
    """The module docstring, or the leading part of an unparsable source (best effort)."""
    try:
        doc = ast.get_docstring(ast.parse(source), clean=True)
    except SyntaxError:
        match = re.match(r"\s*(?:\"\"\"|''')(.*?)(?:\"\"\"|'''|\Z)", source, re.DOTALL)
        return match.group(1) if match else ""
    return doc or ""


def _first(places: list[str], key: str) -> str:
    """The value of ``key`` in the first place that has a non-empty one."""
    for text in places:
        value = _value_of(text, key)
        if value:
            return value
    return ""


def _value_of(text: str, key: str) -> str:
    lines = text.split("\n")
    for i, line in enumerate(lines):
        match = _KEY_LINE.match(line)
        if match is None or not _is_key(_normal_key(match["key"]), key):
            continue
        parts = [_strip_markup(match["value"])]
        for follow in lines[i + 1 :]:
            if not follow.strip() or _FENCE.match(follow) or _is_key_line(follow):
                break
            parts.append(_strip_markup(follow))
        value = " ".join(p for p in parts if p)
        if value:
            return value
    return ""


def _is_key(found: str, key: str) -> bool:
    """``Parent`` also answers to ``Parent id`` / ``Parent program``, and so on."""
    return found == key or found.startswith(key + " ")


def _normal_key(key: str) -> str:
    return re.sub(r"[\s_-]+", " ", key.strip().lower())


def _is_key_line(line: str) -> bool:
    """A ``Key: value`` line that starts a new field: a header key, or a capitalised short one."""
    match = _KEY_LINE.match(line)
    if match is None:
        return False
    key = match["key"].strip()
    known = _normal_key(key) in _KNOWN_KEYS
    return known or (key[:1].isupper() and len(key.split()) <= 4)


def _strip_markup(value: str) -> str:
    value = value.strip()
    value = re.sub(r"^(?:\*\*|__)\s*", "", value)
    value = re.sub(r"\s*(?:\*\*|__)$", "", value)
    return re.sub(r"\s+", " ", value).strip()


def _parent_id(value: str) -> str | None:
    token = value.split()[0] if value.split() else ""
    token = token.strip("`'\"*_()[]{}<>,.;:")
    return None if token.lower() in _NO_PARENT else token
