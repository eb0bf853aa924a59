"""The sandbox: parity with in-process runs, metering through the parent, and containment.

Hostile programs are handed to :class:`SandboxedProgram` directly, which runs no static check,
so what is tested here is the process containment itself.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.evaluation.run_scope import program_run
from embedding_ttc.program_files.checks.rules import ProgramRejected
from embedding_ttc.program_files.program_file import read_program_file
from embedding_ttc.program_files.sandbox.limits import KERNEL_ENV, SandboxLimits, child_env
from embedding_ttc.program_files.sandbox.program import (
    SandboxedProgram,
    run_source,
)
from embedding_ttc.program_files.sandbox.verdict import SandboxFailure, Spent
from embedding_ttc.program_files.sandbox.wire import (
    MAGIC,
    PREFIX,
    FrameReader,
    ProtocolError,
    frame_prefix,
)
from embedding_ttc.programs.base import Context, Program
from embedding_ttc.programs.outcome import CandidateError, Status
from embedding_ttc.programs.output import ProgramOutputError, check_output
from embedding_ttc.tasks.task import RetrievalTask

from fakes import HashingEncoder
from library_support import direct_call

PROGRAMS = Path(__file__).parent / "programs"
FAST = SandboxLimits(wall_seconds=20.0, memory_bytes=2 * 2**30)


def program_source(name: str, **replace: str) -> str:
    source = (PROGRAMS / f"{name}.py").read_text()
    for key, value in replace.items():
        source = source.replace(key, value)
    return source


def in_process(source: str, Q: Any, D: Any, S: Any, ctx: Context) -> Any:
    namespace: dict[str, Any] = {"__name__": "program"}
    exec(compile(source, "<test program>", "exec"), namespace)
    return namespace["program"](Q, D, S, ctx)


def _sessions() -> set[int]:
    """The session id of every live (not zombie) process, from ``/proc/PID/stat``."""
    sessions = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue  # exited meanwhile
            state, _ppid, _pgrp, session = stat.rsplit(")", 1)[1].split()[:4]
            if state != "Z":
                sessions.add(int(session))
    return sessions


class _RecordingPopen(subprocess.Popen):  # type: ignore[type-arg]
    """Popen that remembers the pid of every child it starts."""

    started: ClassVar[list[int]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.started.append(self.pid)


@pytest.fixture()
def token() -> str:
    """A unique suffix for program names (it shows in the child's command line)."""
    return f"t{uuid.uuid4().hex[:12]}"


@pytest.fixture(autouse=True)
def _no_leftovers(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[list[int]]:
    """Every test leaves no process and no temporary directory behind.

    Each child leads its own session, so any process it (or a grandchild) left running
    would still carry the child's pid as its session id.
    """
    scratch = tmp_path_factory.mktemp("sandbox-tmp")
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    started: ClassVar[list[int]] = []
    monkeypatch.setattr(_RecordingPopen, "started", started)
    monkeypatch.setattr(subprocess, "Popen", _RecordingPopen)
    yield started
    assert not set(started) & _sessions()
    assert list(scratch.iterdir()) == []


@pytest.fixture()
def call(tiny_task: RetrievalTask) -> tuple[Any, Any, Any, Context, Any]:
    return direct_call(tiny_task, HashingEncoder())


def run(
    name: str,
    call: tuple[Any, ...],
    token: str,
    limits: SandboxLimits = FAST,
    **replace: str,
) -> Any:
    Q, D, S, ctx, _ = call
    return SandboxedProgram(program_source(name, **replace), f"{name}-{token}", limits)(
        Q, D, S, ctx
    )


def failure(name: str, call: tuple[Any, ...], token: str, **kwargs: Any) -> SandboxFailure:
    with pytest.raises(SandboxFailure) as info:
        run(name, call, token, **kwargs)
    assert isinstance(info.value, CandidateError)
    assert str(info.value) == f"{info.value.status.value}: {info.value.reason}"
    return info.value


# --- valid programs -------------------------------------------------------------------------


def test_sandboxed_program_is_a_program() -> None:
    prog = SandboxedProgram("def program(Q, D, S, ctx):\n    return S\n", "p")
    assert isinstance(prog, Program)
    assert prog.name == "p"


@pytest.mark.parametrize("with_candidates", [False, True])
def test_valid_program_matches_in_process(
    tiny_task: RetrievalTask, token: str, with_candidates: bool
) -> None:
    candidates = [np.array([0, 1, 4]), np.array([2, 3]), np.array([4, 0, 1])]
    Q, D, S, ctx, _ = direct_call(
        tiny_task, HashingEncoder(), candidates if with_candidates else None
    )
    source = program_source("valid_zscore")
    out = SandboxedProgram(source, f"zscore-{token}", FAST)(Q, D, S, ctx)
    expected = in_process(source, Q, D, S, ctx)
    assert out.dtype == np.float32
    assert out.shape == S.shape
    np.testing.assert_array_equal(out, expected)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # from the in-process run
def test_library_code_that_probes_modules_and_warns_still_runs(
    call: tuple[Any, ...], token: str
) -> None:
    """bm25s imports tqdm, which tries multiprocessing inside try/except; numpy warns."""
    Q, D, S, ctx, _ = call
    out = run("valid_bm25", call, token)
    np.testing.assert_array_equal(out, in_process(program_source("valid_bm25"), Q, D, S, ctx))


def test_a_refused_import_that_is_caught_is_no_violation(call: tuple[Any, ...], token: str) -> None:
    Q, D, S, ctx, _ = call
    source = textwrap.dedent(
        """
        def program(Q, D, S, ctx):
            try:
                import socket
            except ImportError:
                socket = None
            return S * 0 + (socket is None)
        """
    )
    out = run_source(source, Q, D, S, ctx, FAST, name=f"probe-{token}")
    assert np.all(out == 1.0)


def test_encodes_are_served_and_metered_by_the_parent(tiny_task: RetrievalTask, token: str) -> None:
    encoder = HashingEncoder()
    Q, D, S, ctx, meter = direct_call(tiny_task, encoder)
    source = program_source("valid_encode")
    out = SandboxedProgram(source, f"encode-{token}", FAST)(Q, D, S, ctx)
    assert meter.snapshot().texts == {
        "program/query/retrieval.query": 3,  # the queries, outside index_time
        "program/index/retrieval.passage": 5,  # the documents, inside index_time
    }
    Q2, D2, S2, ctx2, meter2 = direct_call(tiny_task, encoder)
    np.testing.assert_array_equal(out, in_process(source, Q2, D2, S2, ctx2))
    assert meter2.snapshot().texts == meter.snapshot().texts


def _slow_encodes(tiny_task: RetrievalTask) -> tuple[Any, ...]:
    """A call whose encoder sleeps 0.5 s per request."""
    Q, D, S, ctx, _ = direct_call(tiny_task, HashingEncoder())
    inner = ctx.encode_fn

    def slow(texts: Any, *args: Any, **kwargs: Any) -> Any:
        time.sleep(0.5)
        return inner(texts, *args, **kwargs)

    return Q, D, S, dataclasses.replace(ctx, encode_fn=slow)


SLOW_ENCODES = "def program(Q, D, S, ctx):\n" + "    ctx.encode_fn(['a'])\n" * 4 + "    return S\n"


def test_encoder_time_served_is_charged_to_the_call(tiny_task: RetrievalTask, token: str) -> None:
    # Behaviour changed on purpose: --timeout bounds the whole call, the encodes the parent
    # serves included, so four requests of 0.5 s do not fit in 1.5 s any more.
    Q, D, S, ctx = _slow_encodes(tiny_task)
    limits = SandboxLimits(wall_seconds=1.5, memory_bytes=2 * 2**30)
    with pytest.raises(SandboxFailure) as info:
        SandboxedProgram(SLOW_ENCODES, f"slow-{token}", limits)(Q, D, S, ctx)
    assert info.value.status is Status.TIMEOUT
    assert "s in the program, " in info.value.reason
    assert " s serving " in info.value.reason and " encodes in " in info.value.reason
    assert "limit 1.5 s for the program and the encodes served for it" in info.value.reason


def test_a_call_under_the_older_rule_does_not_count_encodes_served(
    tiny_task: RetrievalTask, token: str
) -> None:
    Q, D, S, ctx = _slow_encodes(tiny_task)
    limits = SandboxLimits(wall_seconds=1.5, memory_bytes=2 * 2**30, timeout_covers="program")
    out = SandboxedProgram(SLOW_ENCODES, f"slow-{token}", limits)(Q, D, S, ctx)
    np.testing.assert_array_equal(out, S)


def test_an_encoder_error_reaches_the_program(call: tuple[Any, ...], token: str) -> None:
    Q, D, S, ctx, _ = call
    source = "def program(Q, D, S, ctx):\n    ctx.encode_fn(['a'], view='no-such-view')\n"
    with pytest.raises(SandboxFailure) as info:
        run_source(source, Q, D, S, ctx, FAST, name=f"badview-{token}")
    assert info.value.status is Status.CRASHED
    assert "UnknownNameError" in info.value.reason
    assert "no-such-view" in info.value.reason


def test_string_hashing_is_the_same_in_every_run(call: tuple[Any, ...], token: str) -> None:
    Q, D, S, ctx, _ = call
    source = textwrap.dedent(
        """
        import numpy as np

        def program(Q, D, S, ctx):
            order = list({w for t in ctx.doc_texts for w in t.split()})
            return S + np.float32(len(order[0]) + 0.01 * len(order[1]))
        """
    )
    runs = [run_source(source, Q, D, S, ctx, FAST, name=f"sets-{token}") for _ in range(2)]
    np.testing.assert_array_equal(runs[0], runs[1])


# --- limits ---------------------------------------------------------------------------------


def test_infinite_loop_times_out(call: tuple[Any, ...], token: str) -> None:
    limits = SandboxLimits(wall_seconds=2.0, memory_bytes=2 * 2**30)
    start = time.monotonic()
    exc = failure("infinite_loop", call, token, limits=limits)
    assert exc.status is Status.TIMEOUT
    assert "2 s" in exc.reason
    assert time.monotonic() - start < 10


def test_cpu_time_limit(call: tuple[Any, ...], token: str) -> None:
    limits = SandboxLimits(wall_seconds=30.0, memory_bytes=2 * 2**30, cpu_seconds=1.0)
    exc = failure("infinite_loop", call, token, limits=limits)
    assert exc.status is Status.TIMEOUT
    assert "CPU-time limit" in exc.reason


@pytest.mark.parametrize("name", ["memory_bomb_numpy", "memory_bomb_list"])
def test_memory_bomb(name: str, call: tuple[Any, ...], token: str) -> None:
    limits = SandboxLimits(wall_seconds=20, memory_bytes=512 * 2**20)
    exc = failure(name, call, token, limits=limits)
    assert exc.status is Status.MEMORY
    assert "MemoryError" in exc.reason


def test_printing_too_much(call: tuple[Any, ...], token: str) -> None:
    exc = failure("print_flood", call, token)
    assert exc.status is Status.CRASHED
    assert f"printed more than {FAST.output_bytes} bytes" in exc.reason


# --- crashes and invalid output -------------------------------------------------------------


def test_exception_is_reported_with_type_message_and_traceback(
    call: tuple[Any, ...], token: str
) -> None:
    exc = failure("raises", call, token)
    assert exc.status is Status.CRASHED
    assert "ValueError" in exc.reason
    assert "bad value 42" in exc.reason
    assert 'raise ValueError(f"bad value {x}")' in exc.reason  # the program's own line


def test_exit_code(call: tuple[Any, ...], token: str) -> None:
    exc = failure("exit_code", call, token)
    assert exc.status is Status.CRASHED
    assert "code 3" in exc.reason


def test_killed_by_a_signal(call: tuple[Any, ...], token: str) -> None:
    exc = failure("abort", call, token)
    assert exc.status is Status.CRASHED
    assert "SIGABRT" in exc.reason


def test_syntax_error_without_static_checks(call: tuple[Any, ...], token: str) -> None:
    Q, D, S, ctx, _ = call
    with pytest.raises(SandboxFailure) as info:
        run_source("def program(Q, D, S, ctx)\n", Q, D, S, ctx, FAST, name=f"syntax-{token}")
    assert info.value.status is Status.CRASHED
    assert "SyntaxError" in info.value.reason


@pytest.mark.parametrize("name", ["wrong_shape", "nan_output", "not_an_array"])
def test_invalid_output_says_what_check_output_says(
    name: str, call: tuple[Any, ...], token: str
) -> None:
    Q, D, S, ctx, _ = call
    exc = failure(name, call, token)
    assert exc.status is Status.INVALID_OUTPUT
    with pytest.raises(ProgramOutputError) as local:
        check_output(in_process(program_source(name), Q, D, S, ctx), S.shape, f"{name}-{token}")
    assert exc.reason == str(local.value)


# --- containment ----------------------------------------------------------------------------


def test_dunder_escape_to_a_signal_is_refused(call: tuple[Any, ...], token: str) -> None:
    exc = failure("dunder_escape", call, token)
    assert exc.status in (Status.REJECTED, Status.CRASHED)
    assert "os.kill" in exc.reason


def test_fork_is_refused_and_leaves_no_process(
    call: tuple[Any, ...], token: str, _no_leftovers: list[int]
) -> None:
    exc = failure("fork", call, token)
    assert exc.status is Status.REJECTED
    assert "start a process (os.fork)" in exc.reason
    assert len(_no_leftovers) == 1
    assert _no_leftovers[0] not in _sessions()


@pytest.mark.parametrize("where", ["outside", "inside"])
@pytest.mark.parametrize("name", ["write_file", "write_file_swallowed"])
def test_file_writes_are_refused(
    name: str, where: str, call: tuple[Any, ...], token: str, tmp_path: Path
) -> None:
    target = str(tmp_path / "escaped.txt") if where == "outside" else "escaped.txt"
    exc = failure(name, call, token, TARGET_PATH=target)
    assert exc.status is Status.REJECTED
    assert exc.reason.startswith("no-external-model: the program tried to write the file")
    assert not (tmp_path / "escaped.txt").exists()
    # "inside": the working directory is gone, and the autouse fixture checks nothing is left


def test_reading_outside_the_working_directory_is_refused(
    call: tuple[Any, ...], token: str
) -> None:
    exc = failure("read_file", call, token)
    assert exc.status is Status.REJECTED
    assert "/etc/hostname" in exc.reason


def test_socket_is_refused(call: tuple[Any, ...], token: str) -> None:
    exc = failure("socket_connect", call, token)
    assert exc.status is Status.REJECTED
    assert "socket" in exc.reason


def test_import_of_a_new_module_is_refused(call: tuple[Any, ...], token: str) -> None:
    exc = failure("import_new", call, token)
    assert exc.status is Status.REJECTED
    assert "import 'ftplib'" in exc.reason


def test_parent_environment_is_invisible(
    call: tuple[Any, ...], token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMBEDDING_TTC_TEST_SECRET", "SECRET_VALUE")
    out = run("read_env", call, token)
    assert np.all(out == 0.0)  # 1.0 would mean the program saw the secret


@pytest.mark.skipif(os.geteuid() != 0, reason="privileges are dropped only when running as root")
def test_root_parent_runs_the_program_as_nobody(call: tuple[Any, ...], token: str) -> None:
    Q, D, S, ctx, _ = call
    source = "import os\n\ndef program(Q, D, S, ctx):\n    return S * 0 + os.getuid()\n"
    out = run_source(source, Q, D, S, ctx, FAST, name=f"uid-{token}")
    assert np.all(out == 65534)


def test_audit_hook_refuses_a_socket_already_imported(tmp_path: Path) -> None:
    """The hook on its own, in a fresh interpreter where ``socket`` was loaded before it."""
    script = textwrap.dedent(
        f"""
        import os, socket, sys
        from embedding_ttc.program_files.sandbox.containment import make_hook
        from embedding_ttc.program_files.sandbox.wire import FrameReader
        r, w = os.pipe()
        sys.addaudithook(make_hook(w, {str(tmp_path)!r}))
        try:
            socket.socket().connect(("127.0.0.1", 9))
        except PermissionError as exc:
            print("refused:", exc)
        frame = FrameReader().feed(os.read(r, 65536))[0]
        print(frame.header["kind"], bytes(frame.payload).decode().replace(chr(10), " | "))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert "refused: sandbox: socket." in out
    assert "violation socket." in out


def test_network_namespace_has_no_route() -> None:
    """The first layer against sockets, on its own (skipped where unshare is not permitted)."""
    script = textwrap.dedent(
        """
        from embedding_ttc.program_files.sandbox.containment import isolate_network
        if not isolate_network():
            print("no-unshare")
            raise SystemExit(0)
        import socket
        try:
            socket.create_connection(("127.0.0.1", 9), timeout=2)
        except OSError as exc:
            print("blocked", exc.errno)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    if "no-unshare" in out:
        pytest.skip("this kernel or container does not permit unshare(CLONE_NEWNET)")
    assert out.startswith("blocked")


def test_the_child_does_not_load_torch(call: tuple[Any, ...], token: str) -> None:
    Q, D, S, ctx, _ = call
    source = textwrap.dedent(
        """
        import sys

        from embedding_ttc.programs.primitives.scores import zscore_rows

        def program(Q, D, S, ctx):
            heavy = {"torch", "sentence_transformers", "transformers"} & set(sys.modules)
            return zscore_rows(S) * 0 + len(heavy)
        """
    )
    out = run_source(source, Q, D, S, ctx, FAST, name=f"light-{token}")
    assert np.all(out == 0)


def test_a_bogus_header_from_the_child_is_handled(call: tuple[Any, ...], token: str) -> None:
    start = time.monotonic()
    exc = failure("bogus_header", call, token)
    assert exc.status is Status.CRASHED
    assert exc.reason.startswith("protocol:")
    assert "10737418240" in exc.reason
    assert time.monotonic() - start < 10  # killed at once, not after its 30 s sleep


def test_importing_the_child_module_stays_light() -> None:
    script = (
        "import sys, embedding_ttc.program_files.sandbox.child\n"
        "heavy = {'torch', 'sentence_transformers', 'transformers', 'numpy'} & set(sys.modules)\n"
        "print(sorted(heavy))\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('embedding_ttc'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    heavy, ours = out.strip().splitlines()
    assert heavy == "[]"
    # Only the child's side of the sandbox: nothing of the parent, the evaluator or the search.
    child_side = {"child", "containment", "preload", "wire"}
    assert ours.split() == [
        "embedding_ttc",
        "embedding_ttc.program_files",
        "embedding_ttc.program_files.sandbox",
        *(f"embedding_ttc.program_files.sandbox.{m}" for m in sorted(child_side)),
    ]


# --- frames ---------------------------------------------------------------------------------


def test_frames_survive_any_split() -> None:
    data = frame_prefix({"kind": "a", "n": 1}, 3) + b"xyz" + frame_prefix({"kind": "b"})
    reader = FrameReader()
    frames = [f for i in range(len(data)) for f in reader.feed(data[i : i + 1])]
    assert [f.header for f in frames] == [{"kind": "a", "n": 1}, {"kind": "b"}]
    assert bytes(frames[0].payload) == b"xyz"
    assert FrameReader().feed(data)[1].payload == b""


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (PREFIX.pack(MAGIC, 10**9, 0), "header of 1000000000 bytes"),
        (PREFIX.pack(b"XXXX", 2, 0) + b"{}", "starts with"),
        (PREFIX.pack(MAGIC, 3, 0) + b"{x}", "not valid UTF-8 JSON"),
        (PREFIX.pack(MAGIC, 2, 0) + b"[]", "string 'kind'"),
        (PREFIX.pack(MAGIC, 17, 10 * 2**30) + b'{"kind":"encode"}', "the limit is 100"),
        (PREFIX.pack(MAGIC, 4000, 0) + b"[" * 4000, "not valid UTF-8 JSON"),
    ],
)
def test_frame_reader_refuses_bad_frames(data: bytes, message: str) -> None:
    reader = FrameReader(max_header=1 << 16, payload_limit=lambda header: 100)
    with pytest.raises(ProtocolError, match=message):
        reader.feed(data)


def test_frame_reader_does_not_allocate_an_announced_payload_over_the_limit() -> None:
    reader = FrameReader(payload_limit=lambda header: 0)
    with pytest.raises(ProtocolError):
        reader.feed(PREFIX.pack(MAGIC, 17, 1 << 62) + b'{"kind":"result"}')


# --- files and limits -----------------------------------------------------------------------


def test_read_program_file_checks_and_names_after_the_stem(tmp_path: Path) -> None:
    file = read_program_file(PROGRAMS / "valid_zscore.py")
    assert (file.name, file.rejected) == ("valid_zscore", None) and file.parsed is not None
    prog = file.sandboxed()
    assert prog.name == "valid_zscore" and prog.source_sha256 == file.sha256
    fork = read_program_file(PROGRAMS / "fork.py")
    assert fork.rejected is not None and fork.rejected.startswith("no-external-model")
    assert fork.parsed is None
    with pytest.raises(ProgramRejected) as info:
        fork.sandboxed()
    assert info.value.reason == fork.rejected and info.value.constraint == "no-external-model"
    named = tmp_path / "scifact_special.py"
    named.write_text("def program(Q, D, S, ctx):\n    return S if 'SciFact' else S\n")
    with pytest.raises(ProgramRejected, match="task-universal"):
        read_program_file(named, task_names=["scifact"]).sandboxed()


def test_read_program_file_reports_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingTTCError, match=r"program file .*missing\.py does not exist"):
        read_program_file(tmp_path / "missing.py")
    with pytest.raises(EmbeddingTTCError, match="cannot read program file"):
        read_program_file(tmp_path)  # a directory
    binary = tmp_path / "binary.py"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(EmbeddingTTCError, match="not UTF-8"):
        read_program_file(binary)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"wall_seconds": 0},
        {"memory_bytes": -1},
        {"threads": 0},
        {"cpu_seconds": 0.0},
        {"timeout_covers": "encodes"},
    ],
)
def test_limits_are_validated(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"must be positive|must be one of run, program"):
        SandboxLimits(**kwargs)


def test_numpy_functions_that_import_submodules_lazily_still_run(call: tuple[Any, ...]) -> None:
    # np.median reaches numpy.ma from inside numpy; the child must have it loaded beforehand.
    source = (
        "import numpy as np\n\n\ndef program(Q, D, S, ctx):\n"
        "    return S - np.median(S, axis=1, keepdims=True)\n"
    )
    Q, D, S, ctx, _ = call
    out = SandboxedProgram(source, "median")(Q, D, S, ctx)
    np.testing.assert_array_equal(out, in_process(source, Q, D, S, ctx))


def test_an_encoder_flood_ends_within_its_text_budget(tiny_task: RetrievalTask, token: str) -> None:
    Q, D, S, ctx, meter = direct_call(tiny_task, HashingEncoder())
    limits = SandboxLimits(wall_seconds=20.0, memory_bytes=2 * 2**30, encode_texts_per_item=4)
    budget = limits.encode_text_budget(len(tiny_task.query_ids), len(tiny_task.doc_ids))
    assert budget == 4 * (3 + 5)
    with pytest.raises(CandidateError) as failure:
        SandboxedProgram(program_source("encoder_flood"), f"flood-{token}", limits)(Q, D, S, ctx)
    assert failure.value.status is Status.BUDGET
    assert f"more than {budget} texts" in failure.value.reason
    # Four requests of eight texts fit the budget of 32; the fifth was refused, not served.
    assert sum(meter.snapshot().texts.values()) == 32


def test_an_encoder_flood_ends_within_its_seconds_budget(
    tiny_task: RetrievalTask, token: str
) -> None:
    Q, D, S, ctx, _ = direct_call(tiny_task, HashingEncoder())
    inner = ctx.encode_fn
    served = []

    def slow(texts: Any, *args: Any, **kwargs: Any) -> Any:
        served.append(len(texts))
        time.sleep(0.2)
        return inner(texts, *args, **kwargs)

    slow_ctx = dataclasses.replace(ctx, encode_fn=slow)
    limits = SandboxLimits(wall_seconds=20.0, memory_bytes=2 * 2**30, encode_seconds=0.5)
    with pytest.raises(CandidateError) as failure:
        SandboxedProgram(program_source("encoder_flood"), f"slowflood-{token}", limits)(
            Q, D, S, slow_ctx
        )
    assert failure.value.status is Status.BUDGET
    assert "took more than 0.5 s" in failure.value.reason
    assert len(served) == 3  # 0.2 s, 0.4 s, 0.6 s: the fourth request is over the budget


def test_the_child_inherits_the_kernel_choice_and_nothing_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.setenv("NPY_DISABLE_CPU_FEATURES", "AVX512F")
    monkeypatch.setenv("SECRET_TOKEN", "do-not-pass")
    monkeypatch.delenv("MKL_CBWR", raising=False)
    env = child_env(SandboxLimits(), "/tmp/work")
    assert env["OPENBLAS_CORETYPE"] == "Haswell" and env["NPY_DISABLE_CPU_FEATURES"] == "AVX512F"
    assert "SECRET_TOKEN" not in env and "MKL_CBWR" not in env
    assert set(env) - set(KERNEL_ENV) >= {"PATH", "HOME", "OPENBLAS_NUM_THREADS"}


def test_the_calls_of_one_run_share_its_clock(tiny_task: RetrievalTask, token: str) -> None:
    # Shortlist batches: the evaluator calls a program once per batch, inside one run, and
    # the limit per program per task counts every call.
    Q, D, S, ctx, _ = direct_call(tiny_task, HashingEncoder())
    program = SandboxedProgram(program_source("valid_encode"), f"batches-{token}", FAST)
    with program_run() as slots:
        program(Q, D, S, ctx)
        program(Q, D, S, ctx)
        clock = slots[id(program)]
        assert isinstance(clock, Spent)
        assert (clock.calls, clock.encoded) == (4, 16)  # two calls' requests, on one clock
    with program_run() as slots:
        # The run's earlier batches used its time up: this call ends at once, timed out.
        slots[id(program)] = Spent(start=time.monotonic() - FAST.wall_seconds)
        with pytest.raises(SandboxFailure) as info:
            program(Q, D, S, ctx)
        assert info.value.status is Status.TIMEOUT
        assert info.value.reason.startswith("timed out after 20.")
    np.testing.assert_array_equal(program(Q, D, S, ctx), program(Q, D, S, ctx))  # no run


def test_the_child_takes_its_working_directory_off_sys_path(monkeypatch, tmp_path):
    # What ``python -P`` does from Python 3.11 on; the child does it itself on 3.10.
    from embedding_ttc.program_files.sandbox import child

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), "/elsewhere"])
    child.drop_working_directory()
    assert sys.path == ["/elsewhere"]
    child.drop_working_directory()  # only the working directory, and only first
    assert sys.path == ["/elsewhere"]
