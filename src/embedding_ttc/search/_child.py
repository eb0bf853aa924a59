"""The sandbox's child process: receive one program and its inputs, contain itself, run it.

:mod:`embedding_ttc.search.sandbox` starts ``python -m embedding_ttc.search._child R W NAME``
in a fresh process for every call; ``R`` and ``W`` are the protocol pipes (never stdout, so
printing cannot corrupt them). This module also defines the wire format both sides speak,
because the child must import nothing heavy (no torch, no evaluator): the parent imports the
format from here.

Wire format. A *frame* is a 16-byte prefix ``MAGIC | header length (u32) | payload length
(u64)`` (big-endian), a UTF-8 JSON object (the header, with a string ``kind``) and raw
payload bytes. Arrays travel as a header ``{"dtype": "<f4", "shape": [n, d]}`` plus their
bytes; the parent checks every length against its limits *before* reading, and the size of
an array against its declared shape before ``np.frombuffer``. Nothing is ever unpickled.

Child → parent: ``encode`` (payload: JSON list of texts), ``index_enter`` / ``index_exit``,
``violation`` (payload: ``event`` newline ``detail``, sent by the audit hook before it raises),
and finally one ``result`` (an array, or the type of a non-array) or ``error`` (payload: the
message and traceback). Parent → child: one ``run`` (the source, texts, ids, settings and the
arrays), then one ``embeddings`` or ``encode_error`` per ``encode``.

The child contains itself in this order, before the program's first line runs: network
namespace (``unshare``), imports (numpy, the modules the program names and the modules those
load lazily), rlimits, dropping root to ``nobody``, and last an audit hook that refuses every
event outside a short allow-list (see :func:`_make_hook`).
"""

from __future__ import annotations

import json
import os
import struct
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    import ast
    from types import CodeType

    import numpy as np
    from numpy.typing import NDArray

MAGIC = b"ETC1"
PREFIX = struct.Struct(">4sIQ")
"""Frame prefix: magic, header length, payload length."""

MAX_HEADER_BYTES = 1 << 16
"""The largest header the parent reads from the child."""

EXIT_MEMORY = 87
"""Exit code of a child that ran out of memory while reporting."""
EXIT_INTERNAL = 88
"""Exit code of a child whose harness failed before it could report."""

NOBODY = 65534
"""The uid and gid a child started as root switches to."""

PROGRAM_NAMESPACE = "program"
"""``__name__`` of the module namespace a program runs in."""

TRACEBACK_FRAMES = 8
"""How many of the innermost frames an error report keeps."""

REFUSED_IMPORT = "sandbox: import of '"
"""How the message of a ``ModuleNotFoundError`` raised by the audit hook starts."""

BENIGN_EVENTS: frozenset[str] = frozenset(
    {
        "exec",  # the program's own module; namedtuple
        "compile",  # namedtuple (a compiled string runs under this same hook)
        "builtins.id",
        "object.__getattr__",  # tracebacks, generator frames: nothing outside is reachable
        "object.__setattr__",
        "object.__delattr__",
        "sys._getframe",  # namedtuple
        "sys._getframemodulename",
        "time.sleep",
        "sys.excepthook",
        "sys.unraisablehook",
        "cpython._PySys_ClearAuditHooks",
        "array.__new__",
    }
)
"""Audit events a contained program may raise freely. ``import``, ``open``, ``os.listdir``
and ``os.scandir`` get a finer answer (:func:`_make_hook`); every other event is a violation."""


class ProtocolError(Exception):
    """The other side sent bytes that are not a well-formed frame within the limits."""


@dataclass(frozen=True)
class Frame:
    """One message: a JSON header and the raw payload that follows it."""

    header: dict[str, Any]
    payload: bytes | bytearray


def frame_prefix(header: Mapping[str, Any], payload_bytes: int = 0) -> bytes:
    """The prefix and header of a frame whose payload of ``payload_bytes`` follows."""
    head = json.dumps(header, separators=(",", ":")).encode("utf-8")
    return PREFIX.pack(MAGIC, len(head), payload_bytes) + head


class FrameReader:
    """Incremental frame parser that checks every length before it buffers anything.

    Args:
        max_header: the largest header accepted.
        payload_limit: the largest payload accepted for a given header (called once the
            header is parsed, before any payload byte is buffered); ``None`` accepts any.

    """

    def __init__(
        self,
        *,
        max_header: int = MAX_HEADER_BYTES,
        payload_limit: Callable[[dict[str, Any]], int] | None = None,
    ) -> None:
        self.max_header = max_header
        self.payload_limit = payload_limit
        self._head = bytearray()
        self._header_len: int | None = None
        self._payload_len = 0
        self._header: dict[str, Any] | None = None
        self._payload = bytearray()
        self._filled = 0

    def feed(self, data: bytes | bytearray | memoryview) -> list[Frame]:
        """Consume ``data``; return the frames it completed (raises :class:`ProtocolError`)."""
        frames: list[Frame] = []
        view = memoryview(data)
        while True:
            if self._header is None:
                view = self._take_head(view)
            if self._header is not None:
                take = min(len(self._payload) - self._filled, len(view))
                self._payload[self._filled : self._filled + take] = view[:take]
                self._filled += take
                view = view[take:]
                if self._filled == len(self._payload):
                    frames.append(Frame(self._header, self._payload))
                    self._reset()
                    continue
            if not view:
                return frames

    def _reset(self) -> None:
        self._head = bytearray()
        self._header_len = None
        self._header = None
        self._payload = bytearray()
        self._filled = 0

    def _take_head(self, view: memoryview) -> memoryview:
        need = PREFIX.size + (self._header_len or 0)
        take = min(need - len(self._head), len(view))
        self._head += view[:take]
        view = view[take:]
        if self._header_len is None and len(self._head) == PREFIX.size:
            magic, header_len, payload_len = PREFIX.unpack(bytes(self._head))
            if magic != MAGIC:
                raise ProtocolError(f"a frame starts with {magic!r}, not {MAGIC!r}")
            if header_len > self.max_header:
                raise ProtocolError(
                    f"a header of {header_len} bytes was announced; the limit is {self.max_header}"
                )
            self._header_len, self._payload_len = header_len, payload_len
            if header_len:
                return self._take_head(view)
        if self._header_len is not None and len(self._head) == PREFIX.size + self._header_len:
            self._header = self._parse_header(bytes(self._head[PREFIX.size :]))
        return view

    def _parse_header(self, raw: bytes) -> dict[str, Any]:
        try:
            header = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            raise ProtocolError(f"a header is not valid UTF-8 JSON ({exc})") from None
        if not isinstance(header, dict) or not isinstance(header.get("kind"), str):
            raise ProtocolError("a header is not a JSON object with a string 'kind'")
        limit = self.payload_limit(header) if self.payload_limit is not None else None
        if limit is not None and self._payload_len > limit:
            raise ProtocolError(
                f"a message of kind {header['kind']!r} announced a payload of "
                f"{self._payload_len} bytes; the limit is {limit}"
            )
        self._payload = bytearray(self._payload_len)
        return header


def write_all(fd: int, chunks: Iterable[bytes | bytearray | memoryview]) -> None:
    """Write every chunk to a blocking file descriptor."""
    for chunk in chunks:
        view = memoryview(chunk).cast("B")
        while view:
            view = view[os.write(fd, view) :]


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
    """``ctx.encode_fn`` in the child: every call is served by the parent's metered encoder."""

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
        items = list(texts)
        for text in items:
            if not isinstance(text, str):
                raise TypeError(f"texts must be strings, got {type(text).__name__}")
        given = {"view": view, "dim": dim, "max_length": max_length}
        options = {k: v for k, v in given.items() if v is not _UNSET}
        for key, value in options.items():
            if value is not None and type(value) not in (str, int, float, bool):
                raise TypeError(
                    f"encode_fn's {key} must be a plain str, int or None, "
                    f"got {type(value).__name__}"
                )
        payload = json.dumps(items).encode("ascii")
        self._channel.send({"kind": "encode", "count": len(items), "options": options}, payload)
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


@contextmanager
def _remote_index_time(channel: _Channel) -> Iterator[None]:
    """``ctx.index_time()`` in the child: the parent enters its own scope meanwhile."""
    channel.send({"kind": "index_enter"})
    try:
        yield
    finally:
        channel.send({"kind": "index_exit"})


@dataclass(frozen=True)
class ChildContext:
    """The child's copy of :class:`~embedding_ttc.programs.base.Context`.

    It has the fields a searched program may read
    (:data:`~embedding_ttc.search.checks.CONTEXT_FIELDS`).
    """

    encode_fn: Callable[..., Any]
    query_texts: tuple[str, ...]
    doc_texts: tuple[str, ...]
    query_ids: tuple[str, ...]
    doc_ids: tuple[str, ...]
    candidates: list[NDArray[np.intp]] | None
    views_collapsed: bool
    index_time: Callable[[], Any]
    doc_lengths: NDArray[np.int64]


def _decode_inputs(request: Frame, channel: _Channel) -> tuple[list[Any], ChildContext]:
    """``[Q, D, S]`` and the context from the parent's ``run`` message."""
    import numpy as np

    header, payload = request.header, request.payload
    arrays: dict[str, Any] = {}
    offset = 0
    for spec in header["arrays"]:
        dtype = np.dtype(spec["dtype"])
        count = 1
        for n in spec["shape"]:
            count *= n
        arrays[spec["name"]] = np.frombuffer(
            payload, dtype=dtype, count=count, offset=offset
        ).reshape(spec["shape"])
        offset += count * dtype.itemsize
    candidates: list[NDArray[np.intp]] | None = None
    if header["candidates"] is not None:
        flat, start, candidates = arrays["candidates"], 0, []
        for length in header["candidates"]:
            candidates.append(flat[start : start + length].astype(np.intp))
            start += length
    texts = header["texts"]
    ctx = ChildContext(
        encode_fn=_RemoteEncoder(channel),
        query_texts=tuple(texts["query_texts"]),
        doc_texts=tuple(texts["doc_texts"]),
        query_ids=tuple(texts["query_ids"]),
        doc_ids=tuple(texts["doc_ids"]),
        candidates=candidates,
        views_collapsed=bool(header["views_collapsed"]),
        index_time=lambda: _remote_index_time(channel),
        doc_lengths=arrays["doc_lengths"],
    )
    return [arrays["Q"], arrays["D"], arrays["S"]], ctx


def _isolate_network() -> bool:
    """Move into a new, empty network namespace (no interface but a down loopback).

    Root needs only ``CLONE_NEWNET``; an unprivileged user needs a user namespace too, which
    the kernel grants only to a single-threaded process, hence this runs before numpy starts
    its BLAS threads. Failure (no permission, no support) is ignored: the audit hook still
    refuses sockets.
    """
    import ctypes

    clone_newuser, clone_newnet = 0x10000000, 0x40000000
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(clone_newnet) == 0:
            return True
        return bool(libc.unshare(clone_newuser | clone_newnet) == 0)
    except (OSError, AttributeError):
        return False


NUMPY_LAZY_SUBMODULES = ("numpy.ma", "numpy.linalg", "numpy.fft", "numpy.polynomial")


def _preload(tree: ast.Module) -> None:
    """Import, before containment, every module the program can reach by name.

    Once the audit hook is in place no new module can be loaded (an import reads files).
    So this imports the allowed modules the program imports, walks its attribute chains
    (``np.polynomial.polynomial`` triggers numpy's lazy submodule import), and imports the
    modules that functions of our own allowed modules import inside their bodies, for the
    functions the program names (``rrf`` imports ``scipy.stats`` lazily).
    """
    import ast
    import importlib

    from embedding_ttc.search.checks import import_aliases, module_allowed, qualified_name

    # numpy imports these on first use from inside its own functions (np.median reaches
    # numpy.ma), where no attribute chain of the program names them.
    for module in NUMPY_LAZY_SUBMODULES:
        importlib.import_module(module)
    aliases = import_aliases(tree)
    names: set[str] = set(aliases.values())
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
        elif isinstance(node, (ast.Name, ast.Attribute)):
            used.add(node.id if isinstance(node, ast.Name) else node.attr)
            dotted = qualified_name(node, aliases)
            if dotted is not None:
                names.add(dotted)
    for dotted in sorted(names):
        _walk_chain(dotted, module_allowed, importlib.import_module)
    ours = {m for m in sys.modules if m.startswith("embedding_ttc.") and module_allowed(m)}
    for module in sorted(_lazy_imports(ours, used)):
        try:
            importlib.import_module(module)
        except Exception:  # the program will fail on it later, and say so
            continue


def _walk_chain(dotted: str, allowed: Callable[[str], bool], load: Callable[[str], object]) -> None:
    """Import or touch each allowed module prefix of ``a.b.c`` (``getattr`` loads lazily)."""
    from embedding_ttc.search.checks import unsafe_name

    parts = dotted.split(".")
    obj: object = None
    for i in range(len(parts)):
        prefix, part = ".".join(parts[: i + 1]), parts[i]
        if obj is None and not allowed(prefix):
            continue  # embedding_ttc.programs: the allowed part starts further down
        if not allowed(prefix) or unsafe_name(prefix) is not None:
            return
        try:
            child = getattr(obj, part, None) if obj is not None else None
            obj = child if child is not None else load(prefix)
        except Exception:
            return
        if not isinstance(obj, ModuleType):
            return


def _lazy_imports(modules: Iterable[str], used: set[str]) -> set[str]:
    """Modules imported inside functions of ``modules`` that the names in ``used`` reach."""
    todo = [(m, n) for m in modules for n in used]
    seen: set[tuple[str, str]] = set()
    found: set[str] = set()
    cache: dict[str, _ModuleInfo | None] = {}
    while todo:
        module, name = todo.pop()
        if (module, name) in seen:
            continue
        seen.add((module, name))
        if module not in cache:
            cache[module] = _ModuleInfo.read(module)
        info = cache[module]
        if info is None:
            continue
        if name in info.imported:
            todo.append(info.imported[name])
        elif name in info.lazy:
            found |= info.lazy[name]
            todo.extend((module, ref) for ref in info.refs[name])
    return found


@dataclass(frozen=True)
class _ModuleInfo:
    """Per top-level definition of one of our modules: lazy imports and names referenced."""

    lazy: dict[str, set[str]]
    refs: dict[str, set[str]]
    imported: dict[str, tuple[str, str]]

    @classmethod
    def read(cls, module: str) -> _ModuleInfo | None:
        import ast

        mod = sys.modules.get(module)
        path = getattr(mod, "__file__", None)
        if not module.startswith("embedding_ttc.") or not path:
            return None
        try:
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
        except (OSError, SyntaxError, ValueError):
            return None
        lazy: dict[str, set[str]] = {}
        refs: dict[str, set[str]] = {}
        imported: dict[str, tuple[str, str]] = {}
        for stmt in tree.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
                for alias in stmt.names:
                    imported[alias.asname or alias.name] = (stmt.module, alias.name)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                lazy[stmt.name], refs[stmt.name] = set(), set()
                for node in ast.walk(stmt):
                    if isinstance(node, ast.Import):
                        lazy[stmt.name].update(a.name for a in node.names)
                    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                        lazy[stmt.name].add(node.module)
                    elif isinstance(node, ast.Name):
                        refs[stmt.name].add(node.id)
        return cls(lazy, refs, imported)


def _contain(settings: Mapping[str, Any]) -> None:
    """Set the rlimits and, when running as root, become ``nobody``."""
    import resource

    def limit(which: int, value: int, margin: int = 0) -> None:
        with suppress(ValueError, OSError):  # e.g. a hard limit already lower
            resource.setrlimit(which, (value, value + margin))

    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(usage.ru_utime + usage.ru_stime + settings["cpu_seconds"]) + 1
    limit(resource.RLIMIT_CORE, 0)
    limit(resource.RLIMIT_FSIZE, 0)  # regular files only; pipes are not files
    limit(resource.RLIMIT_NOFILE, settings["open_files"])
    limit(resource.RLIMIT_AS, settings["memory_bytes"])
    limit(resource.RLIMIT_CPU, cpu, margin=5)  # SIGXCPU at the soft limit, SIGKILL 5 s later
    if settings["drop_privileges"] and os.geteuid() == 0:
        with suppress(OSError):  # a root without CAP_SETUID stays root (documented)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
    limit(resource.RLIMIT_NPROC, 0)  # no fork, no thread (ignored for root)
    sys.modules.pop("resource", None)  # a later "import resource" is an import event


def _reporter(write_fd: int) -> Callable[[str, str], NoReturn]:
    """The hook's ``report(event, detail)``: tell the parent, then raise."""
    write, length, refuse = os.write, len, PermissionError
    head = b'{"kind":"violation"}'
    prefix = MAGIC + length(head).to_bytes(4, "big")

    def report(event: str, detail: str) -> NoReturn:
        body = (event + "\n" + detail)[:2000].encode("utf-8", "replace")
        view = prefix + length(body).to_bytes(8, "big") + head + body
        while view:
            view = view[write(write_fd, view) :]
        raise refuse("sandbox: " + event + " is not allowed (" + detail + ")")

    return report


def _path_rules(
    workdir: str,
) -> tuple[Callable[[Any, Sequence[str]], bool], Callable[[Any, Any], bool]]:
    """The hook's ``under(path, roots)`` and ``wants_write(mode, flags)``."""
    str_type, int_type, type_of = str, int, type
    relative_root = workdir.rstrip("/") + "/"

    def under(path: Any, roots: Sequence[str]) -> bool:
        if type_of(path) is not str_type or ".." in path.split("/"):
            return False
        if not path.startswith("/"):
            path = relative_root + path
        return path.startswith(roots) is True  # no builtin call: builtins may be rebound

    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

    def wants_write(mode: Any, flags: Any) -> bool:
        if type_of(mode) is str_type and ("w" in mode or "a" in mode or "x" in mode or "+" in mode):
            return True
        return type_of(flags) is int_type and flags & writing != 0

    return under, wants_write


def library_roots() -> tuple[str, ...]:
    """Directories of Python's own code: the prefixes and every ``sys.path`` directory."""
    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path}
    return tuple(sorted({os.path.abspath(d).rstrip("/") + "/" for d in dirs if d}))


def _make_hook(
    write_fd: int, workdir: str, quiet: Sequence[str] = ()
) -> Callable[[str, tuple[Any, ...]], None]:
    """The audit hook: allow :data:`BENIGN_EVENTS`, report and refuse everything else.

    Three events get a finer answer. ``open`` (read-only) and ``os.listdir`` /
    ``os.scandir`` are allowed inside the working directory (empty); under ``quiet`` (the
    library's own code, read by ``linecache`` when a warning is shown) they fail with
    ``PermissionError`` without a report; anywhere else they are reported. ``import`` fails
    with ``ModuleNotFoundError`` and no report, since every module a program may use was
    loaded before it started (:func:`_preload`) and libraries probe optional modules inside
    ``try``; a program that does not catch the error is rejected by the parent.

    A program can rebind module globals and builtins (``os.write = ...``), so everything the
    hook uses is bound here, as closure variables, and it touches its arguments only after
    checking their exact type (a ``str`` subclass or a path object could run program code).
    A violation is written to the parent *before* the hook raises, so a program that catches
    the exception is still reported.
    """
    report, (under, wants_write) = _reporter(write_fd), _path_rules(workdir)
    length, str_type, tuple_type, type_of = len, str, tuple, type
    refuse, missing = PermissionError, ModuleNotFoundError
    benign, listing = BENIGN_EVENTS, ("open", "os.listdir", "os.scandir")
    home, quiet = (workdir.rstrip("/") + "/",), tuple(quiet)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if type_of(event) is not str_type:
            report("sys.audit", "an event name that is not a str")
        if event in benign:
            return
        if type_of(args) is not tuple_type or length(args) == 0:
            report(event, "")
        text = type_of(args[0]) is str_type
        shown = args[0] if text else "(not a path string)"
        if event == "import":
            raise missing(REFUSED_IMPORT + shown + "' is not allowed", name=shown)
        if event == "open" and (length(args) < 3 or wants_write(args[1], args[2])):
            report(event, "for writing: " + shown)
        if event in listing:
            if under(args[0], home):
                return
            if under(args[0], quiet):
                raise refuse("sandbox: reading " + shown + " is not allowed")
            report(event, shown)
        report(event, args[0] if text else "")

    return hook


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
    channel: _Channel, code: CodeType, args: list[Any], ctx: ChildContext, lines: list[str]
) -> None:
    """Run the program under the hook and send its result or its failure."""
    import builtins

    from embedding_ttc.search.interface import PROGRAM_FUNCTION

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
        _isolate_network()
    import ast

    import numpy as np

    args, ctx = _decode_inputs(request, channel)
    source: str = request.header["source"]
    filename = f"<program {request.header['name']}>"
    lines = source.splitlines()
    try:
        tree = ast.parse(source, filename=filename)
        _preload(tree)
        code = compile(tree, filename, "exec")
    except (SyntaxError, ValueError, RecursionError) as exc:
        _send_error(channel, *_exception_report(exc, lines, filename))
        return
    _ = np.ones((8, 8)) @ np.ones((8, 8))  # start the BLAS threads before RLIMIT_NPROC
    _contain(settings)
    sys.addaudithook(_make_hook(channel.write_fd, settings["workdir"], library_roots()))
    _run(channel, code, args, ctx, lines)


def main(argv: Sequence[str]) -> NoReturn:
    """Entry point: ``_child READ_FD WRITE_FD NAME`` (the name only labels the process)."""
    try:
        channel = _Channel(int(argv[1]), int(argv[2]))
    except (IndexError, ValueError):
        print("usage: python -m embedding_ttc.search._child READ_FD WRITE_FD NAME", file=sys.stderr)
        os._exit(EXIT_INTERNAL)
    try:
        _serve(channel)
    except MemoryError:
        os._exit(EXIT_MEMORY)
    except BaseException as exc:  # the harness failed before the program ran
        try:
            _flush_output()
            _send_error(channel, f"sandbox {type(exc).__name__}", str(exc)[:2000])
        except BaseException:
            os._exit(EXIT_INTERNAL)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
