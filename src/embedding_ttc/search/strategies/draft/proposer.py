"""Drafting around a chat model: several drafts, a pre-check, and repair turns per generation.

A weak local code model writes programs that fail on shapes, indexing and undefined names
more often than not. :class:`DraftingProposer` wraps any :class:`ChatBackend` and turns such
drafts into valid candidates; each part can be switched off, so its effect can be measured:

* ``prompt="compact"``: the compact prompt of
  :func:`~embedding_ttc.search.prompts.small_model.render_compact_prompt` (helpers, two worked
  examples, a budget of ``context_tokens``) instead of the full prompt; either way the
  generation's :class:`~embedding_ttc.search.prompts.directives.Directive` is in the prompt;
* ``drafts``: up to this many drafts per generation (best-of-N: the first that passes wins),
  each asked with its own sampling seed;
* ``precheck``: each draft is parsed and checked cheaply
  (:func:`~embedding_ttc.search.precheck.check.precheck`); without it, a draft only has to hold a
  program that parses;
* ``repair_rounds``: after a failed check, up to this many repair turns continue the
  conversation: the program, its error and its traceback go back to the model with "fix this
  program; return the whole file" (a draft that does not parse goes straight to the next
  draft instead, :func:`is_syntax_error`);
* ``fix_imports``: before the check, the mechanical repairs of
  :mod:`~embedding_ttc.search.precheck.repairs` run (an open docstring closed,
  module-level uses of ``program``'s arguments moved into it, an unused ``typing`` import
  dropped, helper imports fixed, constants an earlier draft of the conversation or a worked
  example defined carried over). No model call is needed for the commonest small-model
  errors.

The first draft (or repair) that passes is the proposal. Every failed draft and repair
becomes an :class:`~embedding_ttc.search.state.Attempt` in ``Proposal.attempts``, so the
ledger records it. If nothing passes, the last reply that held a program (else the last
reply) is returned anyway for the loop to judge (and, mostly, reject with its own reason):
nothing the model wrote is lost.

Accounting (:mod:`embedding_ttc.search.conversation`, the same for every strategy): the loop
adds the attempts' tokens and seconds to the proposal's
(``LedgerRecord.tokens_in = usage.tokens_in + Σ attempts``), so the proposal's ``usage``
carries the tokens and seconds of its own call only, and the ledger's totals are the sum over
all calls. :class:`~embedding_ttc.search.state.Attempt` has no cost field, so
``usage.cost_usd`` is the sum over all calls.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

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
from embedding_ttc.search.precheck.check import PrecheckResult
from embedding_ttc.search.precheck.hints import repair_hint
from embedding_ttc.search.precheck.repairs import repair_source
from embedding_ttc.search.prompts import DEFAULT_CONTEXT_TOKENS, PromptStyle
from embedding_ttc.search.prompts.directives import Directive, choose_directive
from embedding_ttc.search.prompts.examples import EXAMPLES
from embedding_ttc.search.prompts.full import render_prompt
from embedding_ttc.search.prompts.small_model import render_compact_prompt
from embedding_ttc.search.proposer import base_seed, resolve_parent
from embedding_ttc.search.state import Proposal, SearchState

Precheck = Callable[[str], PrecheckResult]

TRACEBACK_CHARS = 1500
"""Longest traceback sent back in a repair turn."""


class DraftingProposer:
    """Best-of-N drafting with a pre-check and repair turns over a chat backend.

    Args:
        inner: the chat backend (``OpenAIBackend``, ``AnthropicBackend``,
            ``LlamaCppBackend`` or any :class:`ChatBackend`).
        drafts: drafts per generation, ``>= 1``.
        repair_rounds: repair turns per draft after a failed check, ``>= 0``.
        precheck: ``source -> PrecheckResult``; ``None`` accepts any draft that parses.
        prompt: ``"compact"`` or ``"full"``.
        context_tokens: the compact prompt's budget.
        count_tokens: a tokenizer's counter for the budget; default the backend's
            ``count_tokens`` when it has one, else an estimate of four characters a token.
        top_k: frontier programs in the full prompt; ``None``: every program of
            ``state.frontier``.
        fix_imports: repair helper imports mechanically before the check.
        name: what the ledger records as the proposer (default ``draft:<backend>``).

    Raises:
        ValueError: an unknown prompt style (the ranges of ``drafts`` and
            ``repair_rounds`` are checked by :class:`~.options.DraftOptions`).

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
        name: str = "",
    ) -> None:
        # drafts and repair_rounds are the options record's, checked there (DraftOptions).
        if prompt not in ("full", "compact"):
            raise ValueError(f"prompt must be 'full' or 'compact', got {prompt!r}")
        self.inner = inner
        self.name = name or f"draft:{inner.name}"
        self.drafts = drafts
        self.repair_rounds = repair_rounds
        self.precheck = precheck
        self.prompt = prompt
        self.context_tokens = context_tokens
        self.count_tokens = count_tokens or getattr(inner, "count_tokens", None)
        self.top_k = top_k
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
        done: list[Call] = []  # every call, in order (failed calls have no source)
        for d in range(1, self.drafts + 1):
            # Every call of the generation has its own seed: this draft's follow the calls so far.
            calls = self._conversation(state, prompt, d, first_seed=len(done))
            done += calls
            if calls[-1].ok:
                return self._proposal(calls[-1], done, directive, state)
        answered = require_an_answer(done)
        with_code = [x for x in answered if x.source is not None]
        return self._proposal((with_code or answered)[-1], done, directive, state)

    def _conversation(self, state: SearchState, prompt: str, d: int, first_seed: int) -> list[Call]:
        """Draft ``d``: a fresh conversation, repaired until it passes or the rounds run out."""
        base = base_seed(self.inner, state)
        earlier: list[str] = []  # this conversation's programs, newest first

        def judge(reply: ChatReply, r: int) -> Call:
            draft = self._judge(reply, _label(d, r), state, earlier)
            if draft.source is not None:
                earlier.insert(0, draft.source)
            return draft

        def follow_up(call: Call) -> str | None:
            # A fresh draft parses more often than a repaired one: no repair of a syntax error.
            return None if is_syntax_error(call) else repair_message(call)

        return converse(
            lambda messages, seed: self.inner.chat(messages, seed=seed, stop=program_block_done),
            prompt,
            rounds=self.repair_rounds,
            seed=lambda r: call_seed(base, state.generation, first_seed + r),
            judge=judge,
            follow_up=follow_up,
            label=lambda r: _label(d, r),
        )

    def _judge(self, reply: ChatReply, label: str, state: SearchState, earlier: list[str]) -> Call:
        source = parse_reply(reply.text).source
        if source is not None and self.fix_imports:
            examples = [e.source for e in EXAMPLES] if self.prompt == "compact" else []
            donors = [*earlier, *examples]
            source, _ = repair_source(source, donors)
        check = self._check(reply.text, source)
        return Call(
            reply,
            check.ok,
            check.status,
            check.reason,
            source=source,
            hint=repair_hint(check),
            traceback=check.traceback,
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

    def _proposal(
        self, chosen: Call, done: list[Call], directive: Directive, state: SearchState
    ) -> Proposal:
        parsed = parse_reply(chosen.reply.text)
        claimed = resolve_parent(parsed.parent_id, state)
        parent = claimed or (directive.parents[0] if directive.parents else None)
        return Proposal(
            source=chosen.source,
            novelty=parsed.novelty or directive.novelty,
            hypothesis=parsed.hypothesis or directive.hypothesis,
            usage=proposal_usage(chosen.reply.usage, done),
            proposer=self.name,
            parent_id=parent,
            raw_reply=chosen.reply.text,
            attempts=attempts(done, chosen),
        )


def _label(draft: int, repair: int) -> str:
    return f"draft {draft}" + (f" repair {repair}" if repair else "")


def is_syntax_error(check: Call | PrecheckResult) -> bool:
    """Whether a check failed because the program does not parse.

    Such a draft gets no repair turn: measured with the 1.5B local model, the repair of a
    syntax error returned the same text, while the next draft (another seed) mostly parses.
    """
    reason = check.reason
    return check.status == Status.REJECTED and (
        (reason.startswith("parse: ") and "contains no program" not in reason)
        or reason.startswith("interface: syntax error")
    )


def repair_message(call: Call) -> str:
    """The repair turn: the program, its error and traceback, and what to do."""
    if call.source is None:
        return (
            "Your reply contained no program. Return the whole program file in ONE ```python "
            "block: a docstring with Novelty: and Hypothesis: lines, the imports, and "
            "def program(Q, D, S, ctx)."
        )
    parts = [
        "Your program failed the check.",
        f"Error ({call.status.value}): {clip(call.reason, REASON_CHARS)}",
    ]
    if call.traceback:
        parts.append(clip(call.traceback, TRACEBACK_CHARS))
    if call.hint:
        parts.append(f"Hint: {call.hint}")
    parts.append(f"The program:\n```python\n{call.source.rstrip()}\n```")
    parts.append(
        "Fix this program; return the whole file in ONE ```python block. Keep its idea, "
        "use only the helpers listed above, and keep the output a float32 array of shape "
        "S.shape."
    )
    return "\n\n".join(parts)
