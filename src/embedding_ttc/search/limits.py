"""A search run's sandbox limits: those asked, else those recorded, else the defaults.

A run records its limits in ``search.json`` (:class:`~embedding_ttc.runs.config.RunLimits`);
:func:`run_limits` derives them for a new run or a resume, and :func:`sandbox_limits` turns
them into what the sandbox enforces.
"""

from __future__ import annotations

from embedding_ttc.program_files.sandbox.limits import (
    DEFAULT_ENCODE_TEXTS_PER_ITEM,
    DEFAULT_WALL_SECONDS,
    SandboxLimits,
)
from embedding_ttc.runs.config import RunConfig, RunLimits

DEFAULT_MEMORY_GB = 8
"""The address-space limit of a candidate, in GiB."""


def run_limits(
    recorded: RunConfig | None,
    *,
    timeout_seconds: float | None = None,
    encode_texts_per_item: float | None = None,
    memory_gb: int | None = None,
) -> RunLimits:
    """The sandbox's limits of a run: those asked, else those recorded, else the defaults.

    Args:
        recorded: the run directory's configuration (``None``: a new run).
        timeout_seconds: the wall time asked (``None``: not asked).
        encode_texts_per_item: the encoder budget asked (``None``: not asked).
        memory_gb: the memory limit asked (``None``: not asked).

    Raises:
        pydantic.ValidationError: a limit asked that is not above 0.

    """
    base = RunLimits(
        timeout_seconds=DEFAULT_WALL_SECONDS,
        encode_texts_per_item=DEFAULT_ENCODE_TEXTS_PER_ITEM,
        memory_gb=DEFAULT_MEMORY_GB,
    )
    if recorded is not None and recorded.limits is not None:
        base = recorded.limits
    asked = {
        "timeout_seconds": timeout_seconds,
        "encode_texts_per_item": encode_texts_per_item,
        "memory_gb": memory_gb,
    }
    return RunLimits.model_validate(
        {**base.model_dump(), **{k: v for k, v in asked.items() if v is not None}}
    )


def sandbox_limits(limits: RunLimits) -> SandboxLimits:
    """The :class:`~embedding_ttc.program_files.sandbox.limits.SandboxLimits` of a run."""
    return SandboxLimits(
        wall_seconds=limits.timeout_seconds,
        memory_bytes=limits.memory_gb * 2**30,
        encode_texts_per_item=limits.encode_texts_per_item,
        timeout_covers=limits.timeout_covers,
    )
