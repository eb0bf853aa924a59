"""The sandbox's child process: receive one program and its inputs, contain itself, run it.

:mod:`embedding_ttc.program_files.sandbox.session` starts ``python -m
embedding_ttc.program_files.sandbox.child R W NAME`` in a fresh process for every call; ``R``
and ``W`` are the protocol pipes (never stdout, so printing cannot corrupt them), speaking the
format of :mod:`~embedding_ttc.program_files.sandbox.wire`. The child imports nothing heavy (no
torch, no evaluator, no numpy before it has left the network): it is started for every
candidate.

The child contains itself in this order, before the program's first line runs: network
namespace (``unshare``), imports (numpy, the modules the program names and the modules those
load lazily, :mod:`~embedding_ttc.program_files.sandbox.preload`), rlimits, dropping root to
``nobody``, and last an audit hook that refuses every event outside a short allow-list
(:mod:`~embedding_ttc.program_files.sandbox.containment`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any, NoReturn

from embedding_ttc.program_files.sandbox.containment import (
    contain,
    isolate_network,
    library_roots,
    make_hook,
)
from embedding_ttc.program_files.sandbox.preload import preload
from embedding_ttc.program_files.sandbox.wire import (
    EXIT_INTERNAL,
    EXIT_MEMORY,
    Frame,
    FrameReader,
    ProtocolError,
    decode_arrays,
    frame_prefix,
    write_all,
)

if TYPE_CHECKING:
    from types import CodeType

    import numpy as np
    from numpy.typing import NDArray

    from embedding_ttc.programs.base import Context

PROGRAM_NAMESPACE = "program"
"""``__name__`` of the module namespace a program runs in."""

TRACEBACK_FRAMES = 8
"""How many of the innermost frames an error report keeps."""


class _Channel:
    """The child's end of the protocol: blocking frame I/O on two pipes."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self._reader = FrameReader(max_header=1 << 40)
        self._pending: list[Frame] = []

    def send(self, header: Mapping[str, Any], *payload: bytes | bytearray | memoryview) -> None:
        size = sum(memoryview(p).nbytes for p in payload)
        write_all(self.write_fd, [frame_prefix(header, size), *payload])

    def receive(self) -> Frame:
        while not self._pending:
            data = os.read(self.read_fd, 1 << 20)
            if not data:
                raise EOFError("the parent closed the channel")
            self._pending.extend(self._reader.feed(data))
        return self._pending.pop(0)


_UNSET: Any = object()


class _RemoteEncoder:
    """``ctx.encode_fn`` in the child: every call is served by the parent's metered encoder.

    Texts the parent already holds (the served documents, or chunks of them,
    :class:`_LazyTexts`) are named by their unit rather than sent: the parent encodes the same
    texts, or gathers their stored rows when its index has them.
    """

    def __init__(self, channel: _Channel) -> None:
        self._channel = channel

    def __call__(
        self,
        texts: Sequence[str],
        view: str = _UNSET,
        dim: int | None = _UNSET,
        max_length: int | None = _UNSET,
    ) -> NDArray[Any]:
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("texts must be a sequence of strings, not a single string")
        given = {"view": view, "dim": dim, "max_length": max_length}
        options = {k: v for k, v in given.items() if v is not _UNSET}
        for key, value in options.items():
            if value is not None and type(value) not in (str, int, float, bool):
                raise TypeError(
                    f"encode_fn's {key} must be a plain str, int or None, "
                    f"got {type(value).__name__}"
                )
        header: dict[str, Any] = {"kind": "encode", "count": len(texts), "options": options}
        if isinstance(texts, _LazyTexts):
            header["unit"] = texts.unit
            self._channel.send(header)
        else:
            items = list(texts)
            for text in items:
                if not isinstance(text, str):
                    raise TypeError(f"texts must be strings, got {type(text).__name__}")
            header["count"] = len(items)
            self._channel.send(header, json.dumps(items).encode("ascii"))
        reply = self._channel.receive()
        if reply.header["kind"] == "encode_error":
            raise _rebuild_error(reply.header)
        shape = tuple(reply.header["shape"])
        return np.frombuffer(reply.payload, dtype=np.dtype(reply.header["dtype"])).reshape(shape)


def _rebuild_error(header: Mapping[str, Any]) -> Exception:
    """The exception the parent's encoder raised, as the nearest builtin type."""
    kinds: dict[str, type[Exception]] = {
        "ValueError": ValueError,
        "TypeError": TypeError,
        "KeyError": KeyError,
        "UnknownNameError": KeyError,
        "IndexError": IndexError,
    }
    name, message = str(header.get("type")), str(header.get("message"))
    kind = kinds.get(name)
    return kind(message) if kind is not None else RuntimeError(f"{name}: {message}")


def _ask_array(channel: _Channel, header: Mapping[str, Any], payload: bytes = b"") -> Any:
    """Send a request for an array the parent computes; its answer, or its error raised."""
    import numpy as np

    channel.send(header, payload)
    reply = channel.receive()
    if reply.header.get("kind") == "served_error":
        raise _rebuild_error(reply.header)
    if reply.header.get("kind") != header["kind"]:
        raise RuntimeError(f"the parent answered a {header['kind']!r} request wrongly")
    dtype = np.dtype(reply.header["dtype"])
    return np.frombuffer(reply.payload, dtype=dtype).reshape(tuple(reply.header["shape"]))


class _LazyTexts(Sequence[str]):
    """Texts the parent holds, fetched on first use, once; ``len`` needs no fetch.

    ``unit`` names them to the parent (``{"unit": "document"}``, or a granularity and the
    chunks kept per document): a request for them, and an encode of them, send that instead
    of the texts.
    """

    def __init__(self, channel: _Channel, count: int, unit: dict[str, Any]) -> None:
        self._channel = channel
        self._count = count
        self.unit = unit
        self._texts: Sequence[str] | None = None

    def _all(self) -> Sequence[str]:
        if self._texts is None:
            self._channel.send({"kind": "texts", "unit": self.unit})
            reply = self._channel.receive()
            texts = json.loads(bytes(reply.payload).decode("utf-8"))
            if reply.header.get("kind") != "texts" or len(texts) != self._count:
                raise RuntimeError("the parent answered a texts request wrongly")
            self._texts = self._container(texts)
        return self._texts

    @staticmethod
    def _container(texts: list[str]) -> Sequence[str]:
        return texts

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, i: Any) -> Any:
        return self._all()[i]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __add__(self, other: Any) -> Any:
        return self._all() + other

    def __radd__(self, other: Any) -> Any:
        return other + self._all()

    def __eq__(self, other: object) -> bool:
        return self._all() == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{self._count} texts of {self.unit}>"


class _ChunkTexts(_LazyTexts):
    """The texts of chunks of the served documents: a list, as ``chunk_documents`` cuts them."""


class _DocumentTexts(_LazyTexts):
    """``ctx.doc_texts`` in the child: fetched from the parent on first use, once (a tuple).

    A program that never reads its documents' texts (P0, a feedback loop over ``D``) does not
    pay for them: at 1,000 candidates of a served index, reading them from disk and shipping
    them cost a warm call several times the program's own time.
    """

    def __init__(self, channel: _Channel, count: int) -> None:
        super().__init__(channel, count, {"unit": "document"})

    @staticmethod
    def _container(texts: list[str]) -> Sequence[str]:
        return tuple(texts)


class _ServedDocuments(_DocumentTexts):
    """``ctx.doc_texts`` of a deployed call: the documents, and the primitives over them served.

    A :class:`~embedding_ttc.programs.served_texts.ServedTexts`: BM25 and the sentence and paragraph
    chunks of these documents are computed by the parent from what the index stores
    (:mod:`~embedding_ttc.program_files.sandbox.served`), with the values they have over the
    texts, which are fetched only if read.
    """

    def bm25_scores(self, query_texts: Sequence[str]) -> NDArray[np.float32]:
        """``BM25.fit(self).scores(query_texts)``, scored by the parent."""
        if isinstance(query_texts, str):
            raise TypeError("query_texts must be a sequence of strings, not a single string")
        items = list(query_texts)
        for text in items:
            if not isinstance(text, str):
                raise TypeError(f"query texts must be strings, got {type(text).__name__}")
        payload = json.dumps(items, ensure_ascii=False).encode("utf-8")
        scores = _ask_array(self._channel, {"kind": "bm25", "count": len(items)}, payload)
        owned: NDArray[np.float32] = scores.copy()  # writable, the program's own
        return owned

    def served_chunks(
        self, granularity: str, max_per_doc: int | None
    ) -> tuple[NDArray[np.intp], Sequence[str]]:
        """The owners and (lazy) texts of the documents' chunks, cut by the parent."""
        import numpy as np

        unit = {"unit": granularity, "max_per_doc": max_per_doc}
        owner = _ask_array(self._channel, {"kind": "chunks", **unit}).astype(np.intp)
        return owner, _ChunkTexts(self._channel, int(owner.size), unit)


@contextmanager
def _remote_index_time(channel: _Channel) -> Iterator[None]:
    """``ctx.index_time()`` in the child: the parent enters its own scope meanwhile."""
    channel.send({"kind": "index_enter"})
    try:
        yield
    finally:
        channel.send({"kind": "index_exit"})


def _decode_inputs(request: Frame, channel: _Channel) -> tuple[list[Any], Context]:
    """``[Q, D, S]`` and the context from the parent's ``run`` message.

    The context is the library's :class:`~embedding_ttc.programs.base.Context`, its
    ``deployed`` left at ``None`` (a program file never sees it; a deployed call's work reaches
    it through its served documents instead). Imported here, after the child has left the
    network: a program file's own imports (its primitives) load the same package.
    """
    import numpy as np

    from embedding_ttc.programs.base import Context

    header = request.header
    arrays = decode_arrays(header["arrays"], request.payload)
    candidates: list[NDArray[np.intp]] | None = None
    if header["candidates"] is not None:
        flat, start, candidates = arrays["candidates"], 0, []
        for length in header["candidates"]:
            candidates.append(flat[start : start + length].astype(np.intp))
            start += length
    texts = header["texts"]
    texts_class = _ServedDocuments if header.get("served") else _DocumentTexts
    ctx = Context(
        encode_fn=_RemoteEncoder(channel),
        query_texts=tuple(texts["query_texts"]),
        doc_texts=texts_class(channel, int(header["doc_count"])),
        query_ids=tuple(texts["query_ids"]),
        doc_ids=tuple(texts["doc_ids"]),
        candidates=candidates,
        views_collapsed=bool(header["views_collapsed"]),
        index_time=lambda: _remote_index_time(channel),
    )
    return [arrays["Q"], arrays["D"], arrays["S"]], ctx


def _exception_report(exc: BaseException, lines: list[str], filename: str) -> tuple[str, str]:
    """The type name of ``exc`` and a text with its message and innermost frames."""
    try:
        kind = type(exc).__name__
        message = str(exc)
    except BaseException:
        kind, message = "Exception", "<unprintable exception>"
    frames: list[str] = []
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next  # the harness's own frames say nothing about the program
    while tb is not None:
        code = tb.tb_frame.f_code
        line = f'  File "{code.co_filename}", line {tb.tb_lineno}, in {code.co_name}'
        if code.co_filename == filename and 0 < tb.tb_lineno <= len(lines):
            line += "\n    " + lines[tb.tb_lineno - 1].strip()
        frames.append(line)
        tb = tb.tb_next
    text = message[:2000]
    if frames:
        text += "\nTraceback (innermost last):\n" + "\n".join(frames[-TRACEBACK_FRAMES:])
    return kind, text


def _send_error(channel: _Channel, kind: str, text: str, *, memory: bool = False) -> None:
    body = text[:16000].encode("utf-8", "replace")
    channel.send({"kind": "error", "type": kind, "memory": memory}, body)


def _send_result(channel: _Channel, out: object) -> None:
    import numpy as np

    if not isinstance(out, np.ndarray):
        channel.send({"kind": "result", "type": type(out).__name__})
        return
    dtype = out.dtype
    if dtype.kind not in "biufc" or dtype.fields is not None:
        channel.send({"kind": "result", "shape": list(out.shape), "dtype": str(dtype)})
        return
    arr = np.ascontiguousarray(out)
    header = {"kind": "result", "shape": list(arr.shape), "dtype": arr.dtype.str, "raw": True}
    channel.send(header, arr.reshape(-1).view(np.uint8).data)


def _flush_output() -> None:
    for stream in (sys.stdout, sys.stderr):
        with suppress(BaseException):  # a closed or broken stream loses only prints
            stream.flush()


def _run(
    channel: _Channel, code: CodeType, args: list[Any], ctx: Context, lines: list[str]
) -> None:
    """Run the program under the hook and send its result or its failure."""
    import builtins

    from embedding_ttc.program_files.contract import PROGRAM_FUNCTION

    memory: str | None = None
    failure: BaseException | None = None
    out: object = None
    try:
        namespace: dict[str, Any] = {"__name__": PROGRAM_NAMESPACE, "__builtins__": builtins}
        exec(code, namespace)
        function = namespace.get(PROGRAM_FUNCTION)
        if not callable(function):
            raise LookupError(f"the program file defines no function {PROGRAM_FUNCTION!r}")
        out = function(*args, ctx)
    except MemoryError as exc:  # the frames holding the memory are freed when this block ends
        memory = "MemoryError"
        with suppress(BaseException):
            memory = f"MemoryError: {exc}"[:2000]
    except BaseException as exc:  # everything a program raises is reported, SystemExit too
        failure = exc
    _flush_output()
    if memory is not None:
        _send_error(channel, "MemoryError", memory, memory=True)
    elif failure is not None:
        _send_error(channel, *_exception_report(failure, lines, code.co_filename))
    else:
        _send_result(channel, out)


def _serve(channel: _Channel) -> None:
    """Receive the ``run`` message, contain the process, run the program, report."""
    request = channel.receive()
    if request.header.get("kind") != "run":
        raise ProtocolError(f"expected a 'run' message, got {request.header.get('kind')!r}")
    settings = request.header["settings"]
    if settings["isolate_network"]:
        isolate_network()
    import ast

    import numpy as np

    args, ctx = _decode_inputs(request, channel)
    source: str = request.header["source"]
    filename = f"<program {request.header['name']}>"
    lines = source.splitlines()
    try:
        tree = ast.parse(source, filename=filename)
        preload(tree)
        code = compile(tree, filename, "exec")
    except (SyntaxError, ValueError, RecursionError) as exc:
        _send_error(channel, *_exception_report(exc, lines, filename))
        return
    _ = np.ones((8, 8)) @ np.ones((8, 8))  # start the BLAS threads before RLIMIT_NPROC
    contain(settings)
    sys.addaudithook(make_hook(channel.write_fd, settings["workdir"], library_roots()))
    _run(channel, code, args, ctx, lines)


def drop_working_directory() -> None:
    """Remove the working directory from ``sys.path``, as ``python -P`` (3.11+) leaves it out.

    ``python -m`` puts it first; a program then could import a module it wrote there.
    """
    if not getattr(sys.flags, "safe_path", False) and sys.path and sys.path[0] == os.getcwd():
        del sys.path[0]


def entry(argv: Sequence[str], serve: Callable[[_Channel], None], module: str) -> NoReturn:
    """A child's entry point: ``python -m MODULE READ_FD WRITE_FD NAME``, serving ``serve``.

    The name only labels the process. The working directory leaves ``sys.path`` first (what
    ``-P`` does where the interpreter has it). A failure of the harness itself (outside a
    program's run, which reports its own) is sent as a ``sandbox`` error; the process then
    exits.
    """
    drop_working_directory()
    try:
        channel = _Channel(int(argv[1]), int(argv[2]))
    except (IndexError, ValueError):
        print(f"usage: python -m {module} READ_FD WRITE_FD NAME", file=sys.stderr)
        os._exit(EXIT_INTERNAL)
    try:
        serve(channel)
    except MemoryError:
        os._exit(EXIT_MEMORY)
    except BaseException as exc:  # the harness failed outside the program's run
        try:
            _flush_output()
            _send_error(channel, f"sandbox {type(exc).__name__}", str(exc)[:2000])
        except BaseException:
            os._exit(EXIT_INTERNAL)
    os._exit(0)


def main(argv: Sequence[str]) -> NoReturn:
    """Entry point of the per-call child."""
    entry(argv, _serve, "embedding_ttc.program_files.sandbox.child")


if __name__ == "__main__":
    main(sys.argv)
