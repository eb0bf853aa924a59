"""Search/replace edit blocks: how the edit proposer's model changes one program file.

A reply holds one or more blocks in the format code-editing agents use::

    <<<<<<< SEARCH
    lines copied from the parent program
    =======
    the lines that replace them
    >>>>>>> REPLACE

:func:`parse_blocks` reads them (inside or outside a code fence; five to nine marker
characters; ``SEARCH``/``REPLACE`` in any case). A reply with no such block may hold the same
pairs as markdown, which small models often write instead: a ``SEARCH`` heading (``### SEARCH``,
``**Search:**``) over a fenced block, then a ``REPLACE`` heading over another.
:func:`apply_blocks` applies them in order to the parent's source, each to the text the
earlier ones left. A block's SEARCH text is located by the first of four matches that finds
it, from strict to loose:

1. **exact**: the text occurs verbatim (the first occurrence is replaced; a model copying a
   line that occurs twice means the first more often than not, and the result is checked and
   evaluated like any other program anyway);
2. **whitespace**: the same lines once trailing whitespace is dropped and the common
   indentation of the block is taken away; the replacement is re-indented by the difference
   (small models often drop or double a level of indentation when they copy);
3. **code**: the same lines once their comments are dropped as well (a model that copies a
   line with the comment of an example, or rewrites a comment while copying);
4. **fuzzy**: the window of as many source lines with the highest
   :class:`difflib.SequenceMatcher` ratio, when that ratio reaches :data:`FUZZY_RATIO` and is
   the only window that does (a mistyped name or a changed comment in the copy).

A block whose SEARCH text an earlier block already replaced (the model revising its own
change: the same SEARCH twice) replaces that earlier block's replacement. A block that none
of them places, an empty SEARCH section, or a reply with no block at all raises
:class:`EditError`, whose message names the block and shows the closest lines, so that
one repair turn can tell the model what it got wrong.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.program_files.parse import fenced_blocks

FUZZY_RATIO = 0.85
"""Least similarity of a fuzzy match (``difflib`` ratio of the joined, stripped lines).

At 0.85 a 10-line block still matches with a line or two retyped, while another place of the
same program rarely does: over every window of 2 to 10 lines of the library's programs, the
best non-overlapping other window reached 0.85 for at most 1 % of them (3-line windows; none
at 6 lines and more). A block matching two places at this level is refused as ambiguous.
"""

Match = Literal["exact", "whitespace", "code", "fuzzy"]

_SEARCH = re.compile(r"^\s*<{5,9}\s*SEARCH\s*$", re.IGNORECASE)
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9}\s*REPLACE\s*$", re.IGNORECASE)
_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s*)?\**\s*(SEARCH|REPLACE)\s*:?\s*\**\s*:?\s*$", re.IGNORECASE
)


class EditError(EmbeddingTTCError):
    """A reply's edit could not be read or applied (the message says which block and why)."""


@dataclass(frozen=True)
class EditBlock:
    """One search/replace pair, as written (newline-terminated lines, or ``""``)."""

    search: str
    replace: str


@dataclass(frozen=True)
class Applied:
    """An edited source and how each block was placed, in block order."""

    source: str
    matches: tuple[Match, ...]

    @property
    def fuzzy(self) -> int:
        """Blocks placed by a looser match than exact."""
        return sum(m != "exact" for m in self.matches)


def parse_blocks(reply: str) -> list[EditBlock]:
    """Every complete search/replace block of ``reply``, in order.

    Raises:
        EditError: a block is opened but never divided or closed.

    """
    lines = reply.replace("\r\n", "\n").split("\n")
    blocks: list[EditBlock] = []
    i = 0
    while i < len(lines):
        if not _SEARCH.match(lines[i]):
            i += 1
            continue
        start = i + 1
        divider = _find(lines, _DIVIDER, start)
        if divider is None:
            raise EditError(f"block {len(blocks) + 1}: SEARCH without a ======= divider")
        end = _find(lines, _REPLACE, divider + 1)
        if end is None:
            raise EditError(f"block {len(blocks) + 1}: no >>>>>>> REPLACE line closes it")
        blocks.append(EditBlock(_text(lines[start:divider]), _text(lines[divider + 1 : end])))
        i = end + 1
    return blocks or _heading_blocks(lines)


def _heading_blocks(lines: list[str]) -> list[EditBlock]:
    """Pairs written as a ``SEARCH`` heading over a fenced block, then a ``REPLACE`` one."""
    found: list[tuple[str, str]] = []  # (kind, fenced text), in order
    for fenced in fenced_blocks(lines):
        above = next((lines[k] for k in range(fenced.start - 1, -1, -1) if lines[k].strip()), "")
        heading = _HEADING.match(above)
        if heading is not None:
            found.append((heading.group(1).upper(), _text(fenced.code.split("\n"))))
    blocks = []
    for (kind, search), (next_kind, replace) in pairwise(found):
        if kind == "SEARCH" and next_kind == "REPLACE":
            blocks.append(EditBlock(search, replace))
    return blocks


def apply_blocks(source: str, blocks: list[EditBlock]) -> Applied:
    """Apply ``blocks`` in order to ``source`` (see the module docstring for the matching).

    Raises:
        EditError: no block, an empty SEARCH section, or a block that cannot be placed.

    """
    if not blocks:
        raise EditError("the reply holds no <<<<<<< SEARCH / ======= / >>>>>>> REPLACE block")
    text = source if source.endswith("\n") else source + "\n"
    matches: list[Match] = []
    replaced: dict[str, str] = {}  # SEARCH text -> its replacement, as applied so far
    for number, block in enumerate(blocks, 1):
        if not block.search.strip():
            raise EditError(f"block {number}: the SEARCH section is empty")
        asked = block.search
        earlier = replaced.get(asked)
        if earlier is not None and asked not in text and earlier.strip() and earlier in text:
            block = EditBlock(earlier, block.replace)  # revises the earlier block's change
        text, how = _apply_one(text, block, number)
        replaced[asked] = block.replace
        matches.append(how)
    return Applied(text, tuple(matches))


def _apply_one(text: str, block: EditBlock, number: int) -> tuple[str, Match]:
    at = text.find(block.search)
    if at >= 0:
        return text[:at] + block.replace + text[at + len(block.search) :], "exact"
    lines = text.splitlines(keepends=True)
    want = block.search.splitlines()
    placed = _whitespace_match(lines, want)
    if placed is not None:
        lo, shift = placed
        replace = _reindent(block.replace, shift)
        return "".join([*lines[:lo], replace, *lines[lo + len(want) :]]), "whitespace"
    placed = _whitespace_match(lines, want, strip_comment)
    if placed is not None:
        lo, shift = placed
        replace = _reindent(block.replace, shift)
        return "".join([*lines[:lo], replace, *lines[lo + len(want) :]]), "code"
    ratio, lo, runner_up = _fuzzy_match(lines, want)
    if ratio >= FUZZY_RATIO and runner_up < FUZZY_RATIO:
        shift = _indent(lines[lo]) - _indent(want[0]) if want[0].strip() else 0
        replace = _reindent(block.replace, shift)
        return "".join([*lines[:lo], replace, *lines[lo + len(want) :]]), "fuzzy"
    if ratio >= FUZZY_RATIO:
        raise EditError(
            f"block {number}: its SEARCH text matches several places of the program; copy "
            "more lines around the change so that it matches one"
        )
    closest = "".join(lines[lo : lo + len(want)]).rstrip()
    raise EditError(
        f"block {number}: its SEARCH text is not in the program (closest lines, "
        f"{ratio:.0%} similar):\n{closest}"
    )


def _whitespace_match(
    lines: list[str], want: list[str], view: Callable[[str], str] | None = None
) -> tuple[int, int] | None:
    """The first window equal to ``want`` up to trailing space and a common indent shift.

    With ``view``, each line is compared as ``view`` shows it (e.g. without its comment).
    """
    n = len(want)
    see = view or (lambda line: line)
    core = _dedent([see(w) for w in want])
    if not any(core):
        return None
    for lo in range(len(lines) - n + 1):
        window = [line.rstrip("\n") for line in lines[lo : lo + n]]
        if _dedent([see(w) for w in window]) == core:
            first = next((k for k, w in enumerate(want) if w.strip()), 0)
            return lo, _indent(window[first]) - _indent(want[first])
    return None


def _fuzzy_match(lines: list[str], want: list[str]) -> tuple[float, int, float]:
    """The best window's ratio and start, and the best ratio of a non-overlapping window."""
    n = len(want)
    target = "\n".join(w.strip() for w in want)
    scored = []
    for lo in range(max(len(lines) - n + 1, 1)):
        window = "\n".join(line.strip() for line in lines[lo : lo + n])
        scored.append((difflib.SequenceMatcher(None, target, window).ratio(), lo))
    if not scored:
        return 0.0, 0, 0.0
    best, at = max(scored, key=lambda s: (s[0], -s[1]))
    others = [r for r, lo in scored if abs(lo - at) >= n]
    return best, at, max(others, default=0.0)


def strip_comment(line: str) -> str:
    """``line`` without a trailing ``#`` comment (when no quote precedes the ``#``)."""
    at = line.find("#")
    if at < 0 or "'" in line[:at] or '"' in line[:at]:
        return line
    return line[:at].rstrip()


def _dedent(block: list[str]) -> list[str]:
    kept = [line.rstrip() for line in block]
    margin = min((_indent(line) for line in kept if line.strip()), default=0)
    return [line[margin:] if line.strip() else "" for line in kept]


def _reindent(text: str, shift: int) -> str:
    if shift == 0:
        return text
    out = []
    for line in text.splitlines(keepends=True):
        if not line.strip():
            out.append(line)
        elif shift > 0:
            out.append(" " * shift + line)
        else:
            cut = min(-shift, _indent(line))
            out.append(line[cut:])
    return "".join(out)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _find(lines: list[str], pattern: re.Pattern[str], start: int) -> int | None:
    return next((k for k in range(start, len(lines)) if pattern.match(lines[k])), None)


def _text(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)
