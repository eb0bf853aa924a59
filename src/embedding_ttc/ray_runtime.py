"""Where a command's work runs, and Ray for one run: imported, joined or started, shut down.

Two commands can spread their work over Ray (the ``ray`` extra): ``transfer`` (groups of cells,
:mod:`~embedding_ttc.analysis.executors`) and ``search`` (a generation's task runs,
:mod:`~embedding_ttc.search.executors`). Both name their executor from :data:`EXECUTORS` and
hold Ray for the length of a run with :func:`ray_session`.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from embedding_ttc.errors import MissingExtraError, UnknownNameError
from embedding_ttc.registry import closest

EXECUTORS: tuple[str, ...] = ("inprocess", "ray")
"""``inprocess``: in the command's own process; ``ray``: as Ray tasks."""


def check_executor(name: str) -> str:
    """``name`` if it is one of :data:`EXECUTORS`, else :class:`UnknownNameError` with hints."""
    if name in EXECUTORS:
        return name
    near = closest(name, list(EXECUTORS))
    hint = f" Did you mean: {', '.join(near)}?" if near else ""
    raise UnknownNameError(f"unknown executor {name!r}.{hint} Known: {', '.join(EXECUTORS)}")


def import_ray(purpose: str) -> Any:
    """Import Ray, or raise :class:`MissingExtraError` naming the ``ray`` extra and ``purpose``."""
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise MissingExtraError("ray", "ray", purpose) from None


@contextmanager
def ray_session(
    purpose: str,
    *,
    address: str | None = None,
    num_cpus: int | None = None,
    init_options: Mapping[str, Any] | None = None,
) -> Iterator[Any]:
    """Ray, initialised for the block: the ``ray`` module.

    A Ray initialised here is shut down when the block ends; one already initialised (by the
    caller, a notebook, a test) is used and left alone.

    Args:
        purpose: what needs Ray (in the install hint when it is missing).
        address: a cluster to join (``ray.init(address=...)``); ``None``: ``RAY_ADDRESS``
            if set, else a local Ray started here.
        num_cpus: CPUs of a local Ray started here (``None``: every CPU of the machine).
        init_options: further keyword arguments of ``ray.init`` (``include_dashboard`` is
            ``False`` unless given).

    """
    ray = import_ray(purpose)
    owns = not ray.is_initialized()
    if owns:
        options = {"include_dashboard": False, **(init_options or {})}
        ray.init(address=address, num_cpus=num_cpus, **options)
    try:
        yield ray
    finally:
        if owns:
            ray.shutdown()
