"""How the sandbox's child contains itself before a program's first line runs.

In this order (:mod:`~embedding_ttc.program_files.sandbox.child` calls them): a new network
namespace (:func:`isolate_network`), then, once the program's modules are loaded, the rlimits
and the switch from root to ``nobody`` (:func:`contain`), and last an audit hook that refuses
every event outside a short allow-list, reporting each attempt to the parent before it raises
(:func:`make_hook`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from typing import Any, NoReturn

from embedding_ttc.program_files.sandbox.wire import MAGIC, REFUSED_IMPORT

NOBODY = 65534
"""The uid and gid a child started as root switches to."""

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
and ``os.scandir`` get a finer answer (:func:`make_hook`); every other event is a violation."""


def isolate_network() -> bool:
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


def contain(settings: Mapping[str, Any]) -> None:
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


def make_hook(
    write_fd: int, workdir: str, quiet: Sequence[str] = ()
) -> Callable[[str, tuple[Any, ...]], None]:
    """The audit hook: allow :data:`BENIGN_EVENTS`, report and refuse everything else.

    Three events get a finer answer. ``open`` (read-only) and ``os.listdir`` /
    ``os.scandir`` are allowed inside the working directory (empty); under ``quiet`` (the
    library's own code, read by ``linecache`` when a warning is shown) they fail with
    ``PermissionError`` without a report; anywhere else they are reported. ``import`` fails
    with ``ModuleNotFoundError`` and no report, since every module a program may use was
    loaded before it started (:func:`~embedding_ttc.program_files.sandbox.preload.preload`) and
    libraries probe optional modules inside ``try``; a program that does not catch the error
    is rejected by the parent.

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
