"""The edit proposer: the model edits one parent program instead of writing one from scratch.

The paper uses its proposer "purely as a mutation function". :class:`EditProposer` wraps any
:class:`~embedding_ttc.search.backends.base.ChatBackend`; per generation it

1. chooses a parent (:func:`~embedding_ttc.search.population.choose_parent`; a seed,
   the run's reference as a search program, while the frontier shows only P0);
2. sends the edit prompt (:func:`~embedding_ttc.search.strategies.edit.prompt.render_edit_prompt`):
   the parent's source, its per-task results against its own parent, its lineage's lessons,
   and (with ``suggest``, the default) one idea the parent lacks to add as a channel
   (:func:`~embedding_ttc.search.strategies.edit.suggest.suggest_idea`);
3. applies the search/replace blocks of the reply mechanically
   (:func:`~embedding_ttc.search.strategies.edit.blocks.apply_blocks`) and pre-checks the result
   when given a pre-check, after the drafting proposer's mechanical repairs (a helper used
   without its import is imported, a constant read but not defined takes the parent's
   value: :func:`~embedding_ttc.search.precheck.repairs.repair_source`). A reply with no
   block that applies but with a whole program (small
   models often rewrite rather than edit) is taken as that program, as code-editing agents
   accept a whole-file reply; the program's docstring says which it was (``Edit:``);
4. when the edit cannot be applied or the result fails the pre-check, continues the
   conversation with up to ``repair_rounds`` repair turns naming what went wrong, with the
   drafting proposer's one-line fix when the failure is a common one
   (:func:`~embedding_ttc.search.precheck.hints.repair_hint`: a helper's import, an undefined
   name, a near-duplicate); an edit that applied is kept: the repair's blocks apply to the
   edited program, shown again.

The program's module docstring is rewritten to the reply's ``Novelty:``, ``Hypothesis:``,
``Parent:`` and ``Edit:`` lines, so the archived file says what it is. Every failed call becomes an
:class:`~embedding_ttc.search.state.Attempt` (the ledger keeps every reply); accounting is
every strategy's (:mod:`embedding_ttc.search.conversation`: the proposal's usage is its own
call's, the attempts carry the rest, and ``cost_usd`` sums all calls). When nothing passes,
the last edited program (else the parent unchanged is not proposed: ``source=None``) goes to
the loop, which records the rejection.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence

from embedding_ttc.program_files.parse import parse_reply
from embedding_ttc.programs.outcome import Status
from embedding_ttc.search.backends.base import ChatBackend, ChatReply
from embedding_ttc.search.conversation import (
    REASON_CHARS,
    Call,
    attempts,
    call_seed,
    clip,
    converse,
    program_block_done,
    proposal_usage,
    require_an_answer,
)
from embedding_ttc.search.population import EXPLORE, Parent, choose_parent
from embedding_ttc.search.precheck.check import PrecheckResult
from embedding_ttc.search.precheck.hints import repair_hint
from embedding_ttc.search.precheck.repairs import repair_source
from embedding_ttc.search.prompts import DEFAULT_EDIT_CONTEXT_TOKENS
from embedding_ttc.search.prompts.common import TokenCounter, fenced
from embedding_ttc.search.prompts.inspirations import Inspiration
from embedding_ttc.search.proposer import base_seed
from embedding_ttc.search.state import Proposal, SearchState
from embedding_ttc.search.strategies.edit.blocks import EditError, apply_blocks, parse_blocks
from embedding_ttc.search.strategies.edit.prompt import render_edit_prompt
from embedding_ttc.search.strategies.edit.suggest import suggest_idea

Precheck = Callable[[str], PrecheckResult]


class EditProposer:
    """A language model editing one parent program per generation.

    Args:
        inner: the chat backend.
        explore: probability of a parent off the frontier
            (:data:`~embedding_ttc.search.population.EXPLORE`).
        repair_rounds: repair turns after a failed application or pre-check, ``>= 0``.
        precheck: ``source -> PrecheckResult``; ``None`` accepts any edit that parses.
        context_tokens: the prompt's budget.
        count_tokens: a tokenizer's counter (default the backend's ``count_tokens``, else an
            estimate of four characters a token).
        seed: the base seed of the parent choice and the calls (default the backend's, else
            the run's).
        seeds: ``(name, source)`` programs to start from while the frontier shows only P0
            (:func:`~embedding_ttc.search.strategies.edit.seeds.seeds_for`).
        suggest: name one idea the parent lacks in each prompt (:mod:`.suggest`); ``False``:
            leave the choice of the change to the model.
        name: what the ledger records as the proposer (default ``edit:<backend>``).

    """

    def __init__(
        self,
        inner: ChatBackend,
        *,
        explore: float = EXPLORE,
        repair_rounds: int = 1,
        precheck: Precheck | None = None,
        context_tokens: int = DEFAULT_EDIT_CONTEXT_TOKENS,
        count_tokens: TokenCounter | None = None,
        seed: int | None = None,
        seeds: Sequence[tuple[str, str]] = (),
        suggest: bool = True,
        name: str = "",
    ) -> None:
        # repair_rounds and explore are the options record's, checked there (EditOptions).
        self.inner = inner
        self.name = name or f"edit:{inner.name}"
        self.explore = explore
        self.repair_rounds = repair_rounds
        self.precheck = precheck
        self.context_tokens = context_tokens
        self.count_tokens = count_tokens or getattr(inner, "count_tokens", None)
        self.seed = seed
        self.seeds = tuple(seeds)
        self.suggest = suggest

    def _seed(self, state: SearchState) -> int:
        return self.seed if self.seed is not None else base_seed(self.inner, state)

    def propose(self, state: SearchState) -> Proposal:
        """Edit one parent (see the module docstring)."""
        base_seed = self._seed(state)
        parent = choose_parent(state, seed=base_seed, explore=self.explore, seeds=self.seeds)
        idea = suggest_idea(state, parent.name, parent.source) if self.suggest else None
        prompt = render_edit_prompt(
            state,
            parent,
            context_tokens=self.context_tokens,
            count_tokens=self.count_tokens,
            idea=idea,
        )
        current = parent.source

        def follow_up(call: Call) -> str:
            nonlocal current
            if call.source is not None:
                current = call.source  # the edit applied; the repair edits what it made
            return _repair_message(call, current)

        calls = converse(
            lambda messages, seed: self.inner.chat(messages, seed=seed, stop=program_block_done),
            prompt,
            rounds=self.repair_rounds,
            seed=lambda r: call_seed(base_seed, state.generation, r),
            judge=lambda reply, r: self._judge(reply, current, parent, idea),
            follow_up=follow_up,
        )
        if calls[-1].ok:
            return self._proposal(calls[-1], calls, parent)
        answered = require_an_answer(calls)
        edited = [c for c in answered if c.source is not None]
        return self._proposal((edited or answered)[-1], calls, parent)

    def _judge(
        self, reply: ChatReply, current: str, parent: Parent, idea: Inspiration | None = None
    ) -> Call:
        if not reply.text.strip():
            return Call(reply, False, Status.PROPOSER_ERROR, "the model returned an empty reply")
        meta = parse_reply(reply.text)
        try:
            applied = apply_blocks(current, parse_blocks(reply.text))
        except EditError as exc:
            whole = _whole_program(meta.source)
            if whole is None:
                return Call(reply, False, Status.REJECTED, f"edit: {exc}")
            edited, how = whole, "the reply's whole program (no block applied)"
        else:
            edited = applied.source
            how = f"{len(applied.matches)} block(s) placed ({', '.join(applied.matches)})"
        edited, _ = repair_source(edited, donors=(parent.source,))
        novelty = meta.novelty or (f"adds {idea.title} (the suggested idea)" if idea else "")
        source = _with_docstring(edited, novelty, meta.hypothesis, parent.name, how)
        check = self.precheck(source) if self.precheck is not None else _parses(source)
        return Call(reply, check.ok, check.status, check.reason, source, repair_hint(check))

    def _proposal(self, chosen: Call, calls: list[Call], parent: Parent) -> Proposal:
        meta = parse_reply(chosen.reply.text)
        return Proposal(
            source=chosen.source,
            novelty=meta.novelty,
            hypothesis=meta.hypothesis,
            usage=proposal_usage(chosen.reply.usage, calls),
            proposer=self.name,
            parent_id=parent.name,
            raw_reply=chosen.reply.text,
            attempts=attempts(calls, chosen),
            reason="" if chosen.source is not None else chosen.reason[:REASON_CHARS],
        )


def _parses(source: str) -> PrecheckResult:
    try:
        ast.parse(source)
    except SyntaxError as exc:
        line = f" (line {exc.lineno})" if exc.lineno else ""
        return PrecheckResult(False, Status.REJECTED, f"parse: {exc.msg}{line}")
    return PrecheckResult(True, Status.OK)


def _repair_message(call: Call, current: str) -> str:
    reason = clip(call.reason, REASON_CHARS)
    if call.source is None:
        what = "Your edit could not be applied"
    else:
        what = "Your edit applied, but the program it made failed the check"
    hint = f"\nHint: {call.hint}" if call.hint else ""
    return (
        f"{what}: {reason}{hint}\n\nThe program as it is now:\n{fenced(current.rstrip())}\n\n"
        "Reply with search/replace blocks against THIS program (each SEARCH part copied "
        "exactly from it), then the Novelty: and Hypothesis: lines."
    )


def _whole_program(source: str | None) -> str | None:
    """The reply's program when it is a whole one (defines ``program``, holds no edit block)."""
    if source is None or "<<<<<<<" in source or ">>>>>>>" in source:
        return None
    try:
        module = ast.parse(source)
    except SyntaxError:
        return None
    defines = any(
        isinstance(node, ast.FunctionDef) and node.name == "program" for node in module.body
    )
    return source if defines else None


def _with_docstring(
    source: str, novelty: str, hypothesis: str, parent_id: str, how: str = ""
) -> str:
    """``source`` with its module docstring saying what the edit is (when it can be found)."""
    if not novelty and not hypothesis and not how:
        return source
    try:
        module = ast.parse(source)
    except SyntaxError:
        return source  # the check reports it
    lines = [novelty or "An edit of " + parent_id, ""]
    lines += [f"Novelty: {novelty}", f"Hypothesis: {hypothesis}", f"Parent: {parent_id}"]
    if how:
        lines.append(f"Edit: {how}")
    doc = '"""' + "\n".join(lines).replace('"""', "'''") + '\n"""\n'
    first = module.body[0] if module.body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
        and first.end_lineno is not None
    ):
        kept = source.splitlines(keepends=True)
        return "".join([*kept[: first.lineno - 1], doc, *kept[first.end_lineno :]])
    return doc + "\n" + source
