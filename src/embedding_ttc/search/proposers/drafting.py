"""Drafting around a chat model: several drafts, a pre-check, and repair turns per generation.

A weak local code model writes programs that fail on shapes, indexing and undefined names
more often than not. :class:`DraftingProposer` wraps any :class:`ChatBackend` and turns such
drafts into valid candidates; each part can be switched off, so its effect can be measured:

* ``prompt="compact"``: the compact prompt of
  :func:`~embedding_ttc.search.compact_prompt.render_compact_prompt` (helpers, two worked
  examples, a budget of ``context_tokens``) instead of the full prompt; either way the
  generation's :class:`~embedding_ttc.search.compact_prompt.Directive` is in the prompt;
* ``drafts``: up to this many drafts per generation (best-of-N: the first that passes wins),
  each asked with its own sampling seed;
* ``precheck``: each draft is parsed and checked cheaply
  (:func:`~embedding_ttc.search.precheck.precheck`); without it, a draft only has to hold a
  program that parses;
* ``repair_rounds``: after a failed check, up to this many repair turns continue the
  conversation: the program, its error and its traceback go back to the model with "fix this
  program; return the whole file" (a draft that does not parse goes straight to the next
  draft instead, :func:`is_syntax_error`);
* ``fix_imports``: before the check, a docstring left open is closed (:func:`close_docstring`),
  module-level uses of ``program``'s arguments move into it (:func:`move_into_program`), an
  unused ``typing`` import goes (:func:`drop_unused_typing`), and imports are repaired
  mechanically
  (:func:`fix_imports`): a helper imported from the wrong primitives module is imported from
  its own, a helper or ``np`` used without an import gets one. No model call is needed for
  the commonest small-model error.

The first draft (or repair) that passes is the proposal. Every failed draft and repair
becomes an :class:`~embedding_ttc.search.records.Attempt` in ``Proposal.attempts``, so the
ledger records it. If nothing passes, the last reply that held a program (else the last
reply) is returned anyway for the loop to judge (and, mostly, reject with its own reason):
nothing the model wrote is lost.

Accounting: the loop adds the attempts' tokens and seconds to the proposal's
(``LedgerRecord.tokens_in = usage.tokens_in + Σ attempts``), so the proposal's ``usage``
carries the tokens and seconds of its own call only, and the ledger's totals are the sum over
all calls. :class:`~embedding_ttc.search.records.Attempt` has no cost field, so
``usage.cost_usd`` is the sum over all calls.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from embedding_ttc.search.compact_prompt import (
    DEFAULT_CONTEXT_TOKENS,
    PRIMITIVE_PACKAGE,
    Directive,
    choose_directive,
    helper_modules,
    helper_signature,
    render_compact_prompt,
)
from embedding_ttc.search.interface import Status
from embedding_ttc.search.parse import parse_reply
from embedding_ttc.search.precheck import PrecheckResult
from embedding_ttc.search.prompt import render_prompt
from embedding_ttc.search.proposers.base import (
    ChatBackend,
    ChatReply,
    ProposerError,
    resolve_parent,
)
from embedding_ttc.search.records import Attempt, Proposal, SearchState, Usage

PromptStyle = Literal["full", "compact"]
Precheck = Callable[[str], PrecheckResult]

SEED_STRIDE = 100_003
"""Seed offset between successive calls of one generation (draft or repair), so each samples
differently while the first call keeps the bare proposer's seed ``seed + generation``."""

TRACEBACK_CHARS = 1500
"""Longest traceback sent back in a repair turn."""

REASON_CHARS = 600
"""Longest failure reason sent back in a repair turn (and kept in an attempt)."""


@dataclass(frozen=True)
class _Draft:
    """One call's outcome: the reply, what it cost, the parse and the check."""

    reply: ChatReply
    source: str | None
    novelty: str
    hypothesis: str
    parent_id: str | None
    check: PrecheckResult
    label: str
    answered: bool = True


class DraftingProposer:
    """Best-of-N drafting with a pre-check and repair turns over a chat backend.

    Args:
        inner: the LLM backend (``OpenAIProposer``, ``AnthropicProposer``,
            ``LlamaCppProposer`` or any :class:`ChatBackend`).
        drafts: drafts per generation, ``>= 1``.
        repair_rounds: repair turns per draft after a failed check, ``>= 0``.
        precheck: ``source -> PrecheckResult``; ``None`` accepts any draft that parses.
        prompt: ``"compact"`` or ``"full"``.
        context_tokens: the compact prompt's budget.
        count_tokens: a tokenizer's counter for the budget; default the backend's
            ``count_tokens`` when it has one, else an estimate of four characters a token.
        top_k: frontier programs in the full prompt; ``None``: the backend's ``top_k``, else
            every program of ``state.frontier``.
        fix_imports: repair helper imports mechanically before the check.

    Raises:
        ValueError: on ``drafts < 1``, ``repair_rounds < 0`` or an unknown prompt style.

    """

    def __init__(
        self,
        inner: ChatBackend,
        *,
        drafts: int = 3,
        repair_rounds: int = 1,
        precheck: Precheck | None = None,
        prompt: PromptStyle = "compact",
        context_tokens: int = DEFAULT_CONTEXT_TOKENS,
        count_tokens: Callable[[str], int] | None = None,
        top_k: int | None = None,
        fix_imports: bool = True,
    ) -> None:
        if drafts < 1:
            raise ValueError(f"drafts must be >= 1, got {drafts}")
        if repair_rounds < 0:
            raise ValueError(f"repair_rounds must be >= 0, got {repair_rounds}")
        if prompt not in ("full", "compact"):
            raise ValueError(f"prompt must be 'full' or 'compact', got {prompt!r}")
        self.inner = inner
        self.name = inner.name
        self.drafts = drafts
        self.repair_rounds = repair_rounds
        self.precheck = precheck
        self.prompt = prompt
        self.context_tokens = context_tokens
        self.count_tokens = count_tokens or getattr(inner, "count_tokens", None)
        self.top_k = top_k if top_k is not None else getattr(inner, "top_k", None)
        self.fix_imports = fix_imports

    def render(self, state: SearchState, directive: Directive) -> str:
        """The first user message of every draft of ``state.generation``."""
        if self.prompt == "compact":
            return render_compact_prompt(
                state,
                context_tokens=self.context_tokens,
                directive=directive,
                count_tokens=self.count_tokens,
            )
        top_k = len(state.frontier) if self.top_k is None else self.top_k
        return (
            render_prompt(state, top_k=top_k)
            + f"\n## Directive for this generation\n\n{directive.text}\n"
        )

    def propose(self, state: SearchState) -> Proposal:
        """Draft, check and repair until a draft passes; see the module docstring."""
        directive = choose_directive(state)
        prompt = self.render(state, directive)
        done: list[_Draft] = []  # every call, in order (failed calls have no source)
        calls = 0
        for d in range(1, self.drafts + 1):
            messages = [{"role": "user", "content": prompt}]
            for r in range(self.repair_rounds + 1):
                label = f"draft {d}" + (f" repair {r}" if r else "")
                seed = self._seed(state) + state.generation + SEED_STRIDE * calls
                calls += 1
                try:
                    reply = self.inner.chat(messages, seed=seed)
                except ProposerError as exc:
                    done.append(_failed_call(exc, label))
                    break  # this conversation is over; the next draft starts afresh
                draft = self._judge(reply, label, state)
                done.append(draft)
                if draft.check.ok:
                    return self._proposal(draft, done, directive)
                if is_syntax_error(draft.check):
                    break  # a fresh draft parses more often than a repaired one
                messages = [
                    *messages,
                    {"role": "assistant", "content": reply.text},
                    {"role": "user", "content": repair_message(draft.source, draft.check)},
                ]
        answered = [x for x in done if x.answered]
        if not answered:
            usage = _sum_usage([x.reply.usage for x in done])
            detail = "; ".join(f"{x.label}: {x.check.reason}" for x in done)
            raise ProposerError(f"every call failed ({detail})"[:2000], usage)
        with_code = [x for x in answered if x.source is not None]
        return self._proposal((with_code or answered)[-1], done, directive)

    def _seed(self, state: SearchState) -> int:
        """The backend's base seed (as its own ``propose`` uses it), else the run's."""
        seed = getattr(self.inner, "seed", None)
        return seed if isinstance(seed, int) else state.seed

    def _judge(self, reply: ChatReply, label: str, state: SearchState) -> _Draft:
        parsed = parse_reply(reply.text)
        source = parsed.source
        if source is not None and self.fix_imports:
            source, _ = close_docstring(source)
            source, _ = move_into_program(source)
            source, _ = drop_unused_typing(source)
            source, _ = fix_imports(source)
        return _Draft(
            reply=reply,
            source=source,
            novelty=parsed.novelty,
            hypothesis=parsed.hypothesis,
            parent_id=resolve_parent(parsed.parent_id, state),
            check=self._check(reply.text, source),
            label=label,
        )

    def _check(self, text: str, source: str | None) -> PrecheckResult:
        if not text.strip():
            return PrecheckResult(False, Status.PROPOSER_ERROR, "the model returned an empty reply")
        if source is None:
            return PrecheckResult(False, Status.REJECTED, "parse: the reply contains no program")
        if self.precheck is not None:
            return self.precheck(source)
        try:
            ast.parse(source)
        except SyntaxError as exc:
            line = f" (line {exc.lineno})" if exc.lineno else ""
            return PrecheckResult(False, Status.REJECTED, f"parse: {exc.msg}{line}")
        return PrecheckResult(True, Status.OK)

    def _proposal(self, chosen: _Draft, done: list[_Draft], directive: Directive) -> Proposal:
        attempts = tuple(
            Attempt(
                status=x.check.status,
                reason=f"{x.label}: {x.check.reason}"[:REASON_CHARS],
                tokens_in=x.reply.usage.tokens_in,
                tokens_out=x.reply.usage.tokens_out,
                seconds=x.reply.usage.seconds,
                reply=x.reply.text,
            )
            for x in done
            if x is not chosen
        )
        own = chosen.reply.usage
        usage = Usage(
            model=own.model,
            tokens_in=own.tokens_in,
            tokens_out=own.tokens_out,
            seconds=own.seconds,
            cost_usd=sum(x.reply.usage.cost_usd for x in done),
        )
        parent = chosen.parent_id or (directive.parents[0] if directive.parents else None)
        return Proposal(
            source=chosen.source,
            novelty=chosen.novelty or directive.novelty,
            hypothesis=chosen.hypothesis or directive.hypothesis,
            usage=usage,
            proposer=self.name,
            parent_id=parent,
            raw_reply=chosen.reply.text,
            attempts=attempts,
        )


def _failed_call(exc: ProposerError, label: str) -> _Draft:
    """A call that raised, as a draft without a reply."""
    usage = exc.usage or Usage(model="")
    return _Draft(
        reply=ChatReply("", usage),
        source=None,
        novelty="",
        hypothesis="",
        parent_id=None,
        check=PrecheckResult(False, Status.PROPOSER_ERROR, str(exc)),
        label=label,
        answered=False,
    )


def is_syntax_error(check: PrecheckResult) -> bool:
    """Whether a check failed because the program does not parse.

    Such a draft gets no repair turn: measured with the 1.5B local model, the repair of a
    syntax error returned the same text, while the next draft (another seed) mostly parses.
    """
    reason = check.reason
    return check.status == Status.REJECTED and (
        (reason.startswith("parse: ") and "contains no program" not in reason)
        or reason.startswith("interface: syntax error")
    )


def repair_message(source: str | None, check: PrecheckResult) -> str:
    """The repair turn: the program, its error and traceback, and what to do."""
    if source is None:
        return (
            "Your reply contained no program. Return the whole program file in ONE ```python "
            "block: a docstring with Novelty: and Hypothesis: lines, the imports, and "
            "def program(Q, D, S, ctx)."
        )
    parts = [
        "Your program failed the check.",
        f"Error ({check.status.value}): {_clip(check.reason, REASON_CHARS)}",
    ]
    if check.traceback:
        parts.append(_clip(check.traceback, TRACEBACK_CHARS))
    hint = repair_hint(check)
    if hint:
        parts.append(f"Hint: {hint}")
    parts.append(f"The program:\n```python\n{source.rstrip()}\n```")
    parts.append(
        "Fix this program; return the whole file in ONE ```python block. Keep its idea, "
        "use only the helpers listed above, and keep the output a float32 array of shape "
        "S.shape."
    )
    return "\n\n".join(parts)


_CODE_LINE = re.compile(r"^(import |from |def |class |@|[A-Za-z_]\w*\s*(:[^=]*)?=[^=])")


def close_docstring(source: str) -> tuple[str, tuple[str, ...]]:
    """Close a module docstring the model opened and never closed; say what changed.

    A small model often writes ``\"\"\"Novelty: ...`` and ``Hypothesis: ...`` and goes
    straight on to the imports. When the source does not parse for that reason and starts
    with a triple quote, the quote is closed at the end of the last non-blank line before the
    first line that reads as code (an import, a ``def``, an assignment); the result is kept
    only if it parses.
    """
    quote = source.lstrip()[:3]
    if quote not in ('"""', "'''"):
        return source, ()
    try:
        ast.parse(source)
        return source, ()
    except SyntaxError as exc:
        if "triple-quoted" not in str(exc.msg):
            return source, ()
    lines = source.split("\n")
    first = next(i for i, line in enumerate(lines) if line.strip())
    code = next((i for i in range(first + 1, len(lines)) if _CODE_LINE.match(lines[i])), len(lines))
    end = max(i for i in range(first, code) if lines[i].strip())
    lines[end] = lines[end].rstrip() + quote
    repaired = "\n".join(lines)
    try:
        ast.parse(repaired)
    except SyntaxError:
        return source, ()
    return repaired, (f"closed the module docstring after line {end + 1}",)


ARGUMENTS = ("Q", "D", "S", "ctx", "mask")
"""Names that exist only inside ``program``: its arguments and the customary candidate mask."""


def move_into_program(source: str) -> tuple[str, tuple[str, ...]]:
    """Move module-level statements that use ``program``'s arguments into its body.

    A small model often computes a channel at module level (``P = prefix_scores(Q, D, 64)``)
    and uses it inside ``program``, which fails with ``NameError: name 'Q'``. Each such
    top-level assignment or expression is moved, in order, into ``program`` just before the
    first statement of its body that reads a name the moved lines bind (else at the start of
    the body, after a docstring). A source that does not parse, or has no top-level
    ``program``, is returned unchanged; so is the result if it does not parse.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source, ()
    program = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "program"), None
    )
    if program is None or not program.body:
        return source, ()
    moved: list[ast.stmt] = []
    bound: set[str] = set()
    for n in tree.body:  # in order: a statement that reads a moved name moves too
        if not isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)):
            continue
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant):
            continue
        names = [x for x in ast.walk(n) if isinstance(x, ast.Name)]
        if any(x.id in ARGUMENTS or (x.id in bound and isinstance(x.ctx, ast.Load)) for x in names):
            moved.append(n)
            bound.update(x.id for x in names if isinstance(x.ctx, ast.Store))
    if not moved:
        return source, ()
    body = program.body
    start = 1 if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0
    at = next(
        (
            stmt
            for stmt in body[start:]
            if any(isinstance(x, ast.Name) and x.id in bound for x in ast.walk(stmt))
        ),
        body[start] if start < len(body) else None,
    )
    if at is None:
        return source, ()
    lines = source.split("\n")
    indent = re.match(r"\s*", lines[at.lineno - 1]).group(0)  # type: ignore[union-attr]
    block = [
        indent + line.strip()
        for n in moved
        for line in lines[n.lineno - 1 : (n.end_lineno or n.lineno)]
    ]
    target = at.lineno - 1
    for n in reversed(moved):  # bottom-up, so earlier line numbers stay valid
        del lines[n.lineno - 1 : (n.end_lineno or n.lineno)]
        if n.lineno - 1 < target:
            target -= (n.end_lineno or n.lineno) - n.lineno + 1
    lines[target:target] = block
    repaired = "\n".join(lines)
    try:
        ast.parse(repaired)
    except SyntaxError:
        return source, ()
    what = ", ".join(sorted(bound)) or "an expression"
    return repaired, (f"moved the module-level computation of {what} into program()",)


def drop_unused_typing(source: str) -> tuple[str, tuple[str, ...]]:
    """Remove ``typing`` imports whose names the program never uses; say what changed.

    A small model often opens with ``from typing import *``, which the import allow-list
    rejects. Such an import is dropped when no name of ``typing`` is read anywhere in the
    program; an import of a name that is used stays (and the check reports it).
    """
    import typing

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source, ()
    loads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    attrs = {
        n.value.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
    }
    drop: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "typing" and node.level == 0:
            names = {a.asname or a.name for a in node.names}
            if "*" in names:
                names = {n for n in dir(typing) if not n.startswith("_")}
            if not names & loads:
                drop.append(node)
        elif (
            isinstance(node, ast.Import)
            and all(a.name == "typing" for a in node.names)
            and not {a.asname or a.name for a in node.names} & (loads | attrs)
        ):
            drop.append(node)
    if not drop:
        return source, ()
    lines = source.split("\n")
    for node in reversed(drop):
        del lines[node.lineno - 1 : (node.end_lineno or node.lineno)]
    return "\n".join(lines), ("dropped an unused typing import",)


def fix_imports(source: str) -> tuple[str, tuple[str, ...]]:
    """Repair a program's helper imports without asking the model; say what changed.

    * ``from embedding_ttc.programs.primitives.scores import maxsim``: ``maxsim`` lives in
      ``late``, so it is imported from there (names the module does have stay);
    * a helper used but never bound (``zscore_rows(S)`` without an import) is imported from
      its module; ``np`` used without ``import numpy as np`` gets that import.

    A source that does not parse is returned unchanged (the check reports it).

    Returns:
        The repaired source and one note per change (empty when nothing changed).

    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source, ()
    modules = helper_modules()
    lines = source.split("\n")
    notes: list[str] = []
    for node in reversed(tree.body):  # bottom-up, so earlier line numbers stay valid
        module = _primitives_module(node)
        if module is None or not isinstance(node, ast.ImportFrom):
            continue
        replacement = _regroup(node, module, modules, notes)
        if replacement is not None:
            lines[node.lineno - 1 : node.end_lineno] = replacement
    bound = _bound_names(tree)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    additions: list[str] = []
    if "np" in used and "np" not in bound:
        additions.append("import numpy as np")
        notes.append("added: import numpy as np")
    missing: dict[str, list[str]] = {}
    for name in sorted(used - bound):
        if name in modules:
            missing.setdefault(modules[name], []).append(name)
    for module, names in missing.items():
        additions.append(f"from {PRIMITIVE_PACKAGE}.{module} import {', '.join(names)}")
        notes.append(f"added: {additions[-1]}")
    if additions:
        at = _header_end(tree)
        lines[at:at] = additions
    if not notes:
        return source, ()
    return "\n".join(lines), tuple(notes)


def _primitives_module(node: ast.stmt) -> str | None:
    """The module of a top-level ``from embedding_ttc.programs.primitives.x import ...``."""
    if (
        isinstance(node, ast.ImportFrom)
        and node.level == 0
        and node.module is not None
        and node.module.startswith(PRIMITIVE_PACKAGE + ".")
    ):
        return node.module
    return None


def _regroup(
    node: ast.ImportFrom, module: str, modules: dict[str, str], notes: list[str]
) -> list[str] | None:
    """The import split by the module each name really comes from, or ``None`` if it is fine."""
    short = module.removeprefix(PRIMITIVE_PACKAGE + ".")
    try:
        have = importlib.import_module(module)
    except ImportError:
        have = None
    groups: dict[str, list[str]] = {}
    moved = False
    for alias in node.names:
        target = modules.get(alias.name)
        if (have is None or not hasattr(have, alias.name)) and target is not None:
            notes.append(f"{alias.name} is imported from {PRIMITIVE_PACKAGE}.{target}")
            moved = True
        else:
            target = short
        text = alias.name + (f" as {alias.asname}" if alias.asname else "")
        groups.setdefault(target, []).append(text)
    if not moved:
        return None
    return [f"from {PRIMITIVE_PACKAGE}.{m} import {', '.join(n)}" for m, n in groups.items()]


def _bound_names(tree: ast.Module) -> set[str]:
    """Every name the module binds anywhere: imports, definitions, arguments, assignments."""
    bound: set[str] = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def _header_end(tree: ast.Module) -> int:
    """The line after the module docstring and any ``__future__`` import (0-based index)."""
    end = 0
    for i, node in enumerate(tree.body):
        docstring = (
            i == 0
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        )
        future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if not (docstring or future):
            break
        end = node.end_lineno or end
    return end


_UNDEFINED = re.compile(r"NameError: name '(\w+)' is not defined")
_NOT_IN_MODULE = re.compile(r"cannot import name '(\w+)' from '([\w.]+)'")
_BAD_CALL = re.compile(
    r"(\w+)\(\) (?:missing \d+ required|got an unexpected keyword|takes \d+ positional|"
    r"got multiple values)"
)
_TEXT_HINTS: tuple[tuple[str, str], ...] = (
    (
        "near-duplicate",
        "it is almost a copy of that program: keep your idea and add one more kind of "
        'evidence it does not use, e.g. bm25_scores(ctx), chunk_scores(Q, ctx, "paragraph", '
        '"topmean", mask), view_scores(Q, ctx, "classification"), prf_scores(Q, D, S, '
        "mask=mask) or zscore_cols(S, mask), fused in with its own weight",
    ),
    (
        "unknown view",
        'the only views are "retrieval.query", "retrieval.passage", "text-matching" and '
        '"classification" (task names are not views)',
    ),
    (
        "owner must be",
        "maxsim and topmeansim need the chunks' owner array; chunk_scores(Q, ctx, unit, "
        "reduce, mask) does the chunking, encoding and pooling for you",
    ),
    (
        "not a single string",
        "ctx.encode_fn takes a list of strings: ctx.encode_fn([text], view), or "
        "ctx.encode_fn(list(ctx.doc_texts), view)",
    ),
    (
        "texts must be strings",
        "ctx.encode_fn encodes texts (strings), not arrays; the embeddings are already Q and D",
    ),
    (
        "'Chunks' object",
        "chunk_documents returns one Chunks object: use chunks.texts (list of str), "
        "chunks.owner (int array) and chunks.n_docs; or call chunk_scores(Q, ctx, unit, "
        "reduce, mask), which does the chunking, encoding and pooling",
    ),
    (
        "not aligned",
        "Q is (n_q, d) and D is (n_d, d): a score matrix like S is Q @ D.T",
    ),
    (
        "operands could not be broadcast",
        "every channel must have S.shape (n_q, n_d); a per-query value needs [:, None], "
        "a per-document value [None, :]",
    ),
)


def repair_hint(check: PrecheckResult) -> str:
    """A concrete fix for the commonest small-model errors, or ``""``.

    An undefined or wrongly imported name that is a helper gets its import line; an unknown
    one is named as unknown; a helper called with the wrong arguments gets its signature; a
    misused encoder, chunk object or matrix product gets the right use; a wrong output shape
    gets the shape it must have.
    """
    modules = helper_modules()
    undefined = _UNDEFINED.search(check.reason)
    misplaced = _NOT_IN_MODULE.search(check.reason)
    found = undefined or misplaced
    name = found.group(1) if found is not None else None
    if name is not None and name in modules:
        return f"add the import: from {PRIMITIVE_PACKAGE}.{modules[name]} import {name}"
    if misplaced is not None:
        return f"{misplaced.group(1)} does not exist in {misplaced.group(2)}; use a listed helper"
    if undefined is not None and name in ARGUMENTS:
        return (
            "Q, D, S, ctx and mask exist only inside def program(Q, D, S, ctx): move every "
            f"line that uses {name} into the function body"
        )
    if undefined is not None:
        return f"{name} is not defined: define it in the file, or use a listed helper instead"
    bad_call = _BAD_CALL.search(check.reason)
    if bad_call is not None and bad_call.group(1) in modules:
        return f"call it exactly as listed: {helper_signature(bad_call.group(1))}"
    for needle, hint in _TEXT_HINTS:
        if needle in check.reason:
            return hint
    if check.status == Status.INVALID_OUTPUT and "shape" in check.reason:
        return "return one score per (query, document): an array of shape S.shape"
    if check.status == Status.INVALID_OUTPUT and "non-finite" in check.reason:
        return "a division by zero or a log of 0 made NaN or inf; add a small epsilon"
    return ""


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _sum_usage(usages: list[Usage]) -> Usage:
    return Usage(
        model=usages[-1].model if usages else "",
        tokens_in=sum(u.tokens_in for u in usages),
        tokens_out=sum(u.tokens_out for u in usages),
        seconds=sum(u.seconds for u in usages),
        cost_usd=sum(u.cost_usd for u in usages),
    )
