"""The warm worker's child: load one program, contain itself once, then run it per message.

:mod:`~embedding_ttc.program_files.sandbox.warm` starts ``python -m
embedding_ttc.program_files.sandbox.warm_child R W NAME`` once per served program and keeps it.
The child contains itself exactly as the per-call child does
(:mod:`~embedding_ttc.program_files.sandbox.child`), in the same order and with the same
functions: network namespace, imports
(:func:`~embedding_ttc.program_files.sandbox.preload.preload`), rlimits, dropping root,
and last the audit hook. Only then does it answer ``ready``; every ``run`` message after
that is one program call, answered with one ``result`` or ``error`` frame (encoder requests
in between, as in a per-call child).

The program's module is executed afresh for every call (in a new namespace, under the hook),
so its module globals start clean each time, as they do in a fresh process. What a call can
carry to the next is what it changes outside its own namespace (an attribute set on numpy, a
cached value in a library module); the parent replaces the child after any failure, so a
failing call carries nothing forward.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from embedding_ttc.program_files.sandbox.child import (
    _Channel,
    _decode_inputs,
    _exception_report,
    _run,
    _send_error,
    entry,
)
from embedding_ttc.program_files.sandbox.containment import (
    contain,
    isolate_network,
    library_roots,
    make_hook,
)
from embedding_ttc.program_files.sandbox.preload import preload
from embedding_ttc.program_files.sandbox.wire import ProtocolError

if TYPE_CHECKING:
    from types import CodeType


def _load(channel: _Channel) -> tuple[CodeType, list[str]] | None:
    """Receive ``load``, compile the program and contain the process; ``None`` on an error."""
    request = channel.receive()
    if request.header.get("kind") != "load":
        raise ProtocolError(f"expected a 'load' message, got {request.header.get('kind')!r}")
    settings = request.header["settings"]
    if settings["isolate_network"]:
        isolate_network()
    import ast

    import numpy as np

    source: str = request.header["source"]
    filename = f"<program {request.header['name']}>"
    lines = source.splitlines()
    try:
        tree = ast.parse(source, filename=filename)
        preload(tree)
        code = compile(tree, filename, "exec")
    except (SyntaxError, ValueError, RecursionError) as exc:
        _send_error(channel, *_exception_report(exc, lines, filename))
        return None
    _ = np.ones((8, 8)) @ np.ones((8, 8))  # start the BLAS threads before RLIMIT_NPROC
    # What the per-call loop uses, imported now: after the hook no module can be loaded.
    from embedding_ttc.program_files.contract import PROGRAM_FUNCTION  # noqa: F401
    from embedding_ttc.programs.base import Context  # noqa: F401

    contain(settings)
    sys.addaudithook(make_hook(channel.write_fd, settings["workdir"], library_roots()))
    channel.send({"kind": "ready"})
    return code, lines


def _serve(channel: _Channel) -> None:
    """Load and contain, then answer ``run`` messages until the parent closes the channel."""
    loaded = _load(channel)
    if loaded is None:
        return
    code, lines = loaded
    while True:
        try:
            request = channel.receive()
        except EOFError:
            return
        if request.header.get("kind") != "run":
            raise ProtocolError(f"expected a 'run' message, got {request.header.get('kind')!r}")
        args, ctx = _decode_inputs(request, channel)
        _run(channel, code, args, ctx, lines)
        del args, ctx  # a call's inputs are not kept while the child waits for the next


def main(argv: Sequence[str]) -> NoReturn:
    """Entry point of the warm child."""
    entry(argv, _serve, "embedding_ttc.program_files.sandbox.warm_child")


if __name__ == "__main__":
    main(sys.argv)
