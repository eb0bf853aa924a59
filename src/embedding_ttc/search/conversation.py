"""One generation's conversation with a chat model: calls, repair turns, seeds and accounting.

The draft, edit and guided strategies all talk to their backend the same way, written once
here: :func:`converse` sends the prompt, judges each reply (:class:`Call`), and while a reply
fails and repair rounds remain, continues the conversation with the strategy's follow-up
message; a call that raises ends the conversation. Each call samples with its own seed
(:func:`call_seed`). What the calls cost is summed the same way for every strategy: the
proposal's ``usage`` carries its own call's tokens and seconds and every call's cost
(:func:`proposal_usage`), the other calls are its attempts (:func:`attempts`; the loop adds
their tokens and seconds to the ledger line), and a generation whose every call failed is a
:class:`~embedding_ttc.search.proposer.ProposerError` carrying the sum
(:func:`require_an_answer`). A strategy that asks for a program ends a streamed reply at its
program block (:func:`program_block_done`, the backend's stop rule).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from embedding_ttc.programs.outcome import Status
from embedding_ttc.search.backends.base import ChatReply
from embedding_ttc.search.proposer import ProposerError
from embedding_ttc.search.state import Attempt, Usage

SEED_STRIDE = 100_003
"""Seed offset between successive calls of one generation (draft or repair), so each samples
differently while the first call keeps the bare proposer's seed ``seed + generation``."""

REASON_CHARS = 600
"""Longest failure reason sent back in a repair turn (and kept in an attempt)."""

Messages = list[dict[str, str]]
Send = Callable[[Messages, int], ChatReply]
"""``(messages, seed) -> reply``: one chat request (a backend's ``chat``, perhaps with a schema)."""


@dataclass(frozen=True, eq=False)
class Call:
    """One chat call of a generation and what the strategy made of its reply.

    Attributes:
        reply: the reply (empty text, and what the call cost, when the call raised).
        ok: whether the reply is usable as it is (the conversation ends there).
        status: ``ok``, or the status a failure would have in the ledger.
        reason: why the reply is not usable (``""`` when it is).
        source: the program the reply made, if any.
        hint: a one-line fix for the repair turn.
        traceback: the program's innermost frames when its check raised.
        label: which call this is (``draft 2 repair 1``), when the strategy names them.

    """

    reply: ChatReply
    ok: bool
    status: Status
    reason: str = ""
    source: str | None = None
    hint: str = ""
    traceback: str = ""
    label: str = ""

    @property
    def answered(self) -> bool:
        """Whether the model answered at all (a call that raised did not)."""
        return self.status is not Status.PROPOSER_ERROR

    @property
    def described(self) -> str:
        """The reason, after the call's label when it has one."""
        return f"{self.label}: {self.reason}" if self.label else self.reason


_CLOSED_BLOCK = re.compile(r"```[\w+-]*[^\S\n]*\n(.*?)\n[^\S\n]*```", re.DOTALL)


def program_block_done(text: str) -> bool:
    """Whether ``text`` holds a closed fenced code block that defines ``program``.

    The stop rule of a request for a program: a backend that streams ends the reply there,
    since the prose a chat model adds after its code is never read (and costs seconds of CPU
    per token on a local model).
    """
    return any("def program" in m.group(1) for m in _CLOSED_BLOCK.finditer(text))


def call_seed(base: int, generation: int, call: int) -> int:
    """The seed of a generation's ``call``-th call (from 0); the first is ``base + generation``."""
    return base + generation + SEED_STRIDE * call


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def failed_call(exc: ProposerError, label: str = "") -> Call:
    """A call that raised: no reply, what it cost, and the error as its reason."""
    reply = ChatReply("", exc.usage or Usage(model=""))
    return Call(reply, False, Status.PROPOSER_ERROR, str(exc), label=label)


def converse(
    send: Send,
    prompt: str,
    *,
    rounds: int,
    seed: Callable[[int], int],
    judge: Callable[[ChatReply, int], Call],
    follow_up: Callable[[Call], str | None],
    label: Callable[[int], str] = lambda r: "",
) -> list[Call]:
    """Ask, judge, and repair up to ``rounds`` times; every call, in order.

    Args:
        send: one chat request.
        prompt: the first user message.
        rounds: repair turns after a failed reply, ``>= 0``.
        seed: the seed of round ``r`` (0 is the first call).
        judge: what the strategy makes of round ``r``'s reply.
        follow_up: the next user message after a failed call, or ``None`` to end here.
        label: the name of round ``r``'s call (kept in its :class:`Call`).

    Returns:
        The calls; the conversation ends at the first usable reply, a call that raised, a
        ``None`` follow-up, or the last round.

    """
    messages: Messages = [{"role": "user", "content": prompt}]
    calls: list[Call] = []
    for r in range(rounds + 1):
        try:
            reply = send(messages, seed(r))
        except ProposerError as exc:
            calls.append(failed_call(exc, label(r)))
            break  # this conversation is over
        call = judge(reply, r)
        calls.append(call)
        if call.ok:
            break
        message = follow_up(call)
        if message is None:
            break
        messages = [
            *messages,
            {"role": "assistant", "content": reply.text},
            {"role": "user", "content": message},
        ]
    return calls


def require_an_answer(calls: Sequence[Call]) -> list[Call]:
    """The calls the model answered.

    Raises:
        ProposerError: when it answered none, with every call's reason and their summed cost.

    """
    answered = [c for c in calls if c.answered]
    if not answered:
        detail = "; ".join(c.described for c in calls)
        usage = Usage.total([c.reply.usage for c in calls])
        raise ProposerError(f"every call failed ({detail})"[:2000], usage)
    return answered


def attempts(
    calls: Sequence[Call], chosen: Call | None, *, limit: int | None = REASON_CHARS
) -> tuple[Attempt, ...]:
    """Every call but ``chosen`` as an attempt (reason after its label, cut to ``limit``)."""
    return tuple(
        Attempt(
            status=c.status,
            reason=c.described[:limit] if limit is not None else c.described,
            tokens_in=c.reply.usage.tokens_in,
            tokens_out=c.reply.usage.tokens_out,
            seconds=c.reply.usage.seconds,
            reply=c.reply.text,
        )
        for c in calls
        if c is not chosen
    )


def proposal_usage(own: Usage, calls: Sequence[Call]) -> Usage:
    """The proposal's usage: ``own`` call's model, tokens and seconds, every call's cost."""
    return Usage(
        model=own.model,
        tokens_in=own.tokens_in,
        tokens_out=own.tokens_out,
        seconds=own.seconds,
        cost_usd=sum(c.reply.usage.cost_usd for c in calls),
    )
