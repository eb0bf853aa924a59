"""The rules of the static checks, written down as tables, and the rejection they raise.

Every rejection is a :class:`ProgramRejected` whose reason is one sentence that starts with
the constraint's name (:data:`~embedding_ttc.program_files.contract.CONSTRAINTS`), or with
``interface`` when the file breaks the program-file contract itself.
"""

from __future__ import annotations

from embedding_ttc.programs.outcome import CandidateError, Status

MAX_SOURCE_BYTES = 100_000
"""The largest program file accepted, in UTF-8 bytes."""

CONTEXT_FIELDS: frozenset[str] = frozenset(
    {
        "encode_fn",
        "query_texts",
        "doc_texts",
        "query_ids",
        "doc_ids",
        "candidates",
        "views_collapsed",
        "index_time",
        "doc_lengths",
    }
)
"""The attributes of :class:`~embedding_ttc.programs.base.Context` a program may read."""

DEPLOY_ONLY_FIELDS: frozenset[str] = frozenset({"deployed"})
"""Context fields a searched program does not see: deployment hints for library programs.

``ctx.deployed`` (:class:`~embedding_ttc.programs.base.DeployedInputs`) is ``None`` wherever a
searched program is evaluated: on whole query batches, without an index; in the sandbox's
child it is ``None`` even when served (a deployed call's stored work reaches a program file
through its served documents, :mod:`~embedding_ttc.program_files.sandbox.served`).
"""

FORBIDDEN_NAMES: frozenset[str] = frozenset(
    {
        "open",
        "exec",
        "eval",
        "compile",
        "__import__",
        "globals",
        "locals",
        "vars",
        "getattr",
        "setattr",
        "delattr",
        "input",
        "breakpoint",
        "help",
        "exit",
        "quit",
        "memoryview",
        "__builtins__",
    }
)
"""Builtins that reach files, code, namespaces or the terminal (any use of the name is refused)."""

NONDETERMINISTIC_BUILTINS: frozenset[str] = frozenset({"hash", "id"})
"""Builtins whose value changes from run to run (refused unless the program binds the name)."""

NONDETERMINISTIC_MODULES: frozenset[str] = frozenset(
    {"random", "time", "datetime", "uuid", "secrets"}
)
"""Modules whose import is reported as a ``deterministic`` violation."""

SEEDED_RANDOM_CALLS: frozenset[str] = frozenset(
    {
        "numpy.random.default_rng",
        "numpy.random.seed",
        "numpy.random.PCG64",
        "numpy.random.PCG64DXSM",
        "numpy.random.Philox",
        "numpy.random.SFC64",
        "numpy.random.MT19937",
    }
)
"""``numpy.random`` callables allowed when called with one integer literal (the seed)."""

RANDOM_TYPES: frozenset[str] = frozenset({"numpy.random.Generator", "numpy.random.BitGenerator"})
"""``numpy.random`` names allowed anywhere (types: a generator needs a seeded bit generator)."""

INTROSPECTION_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "gi_frame",
        "gi_code",
        "gi_yieldfrom",
        "cr_frame",
        "cr_code",
        "cr_await",
        "ag_frame",
        "ag_code",
        "ag_await",
        "f_back",
        "f_builtins",
        "f_code",
        "f_globals",
        "f_locals",
        "f_trace",
        "tb_frame",
        "tb_next",
        "co_code",
        "co_consts",
        "co_names",
    }
)
"""Attributes that reach frames and code objects (the classic ways out of a namespace)."""

UNSAFE_ATTRIBUTES: frozenset[str] = frozenset(
    {"tofile", "dump", "ctypes", "ctypeslib", "as_strided"}
)
"""Attribute names refused on any object: array file output, raw pointers, unchecked strides."""

NUMPY_UNSAFE: frozenset[str] = frozenset(
    {
        "numpy.load",
        "numpy.save",
        "numpy.savez",
        "numpy.savez_compressed",
        "numpy.savetxt",
        "numpy.loadtxt",
        "numpy.genfromtxt",
        "numpy.fromfile",
        "numpy.fromregex",
        "numpy.memmap",
        "numpy.DataSource",
        "numpy.ctypeslib",
        "numpy.f2py",
        "numpy.testing",
        "numpy.distutils",
        "numpy.lib.format",
        "numpy.lib.npyio",
        "numpy.lib.stride_tricks.as_strided",
    }
)
"""numpy names (and their members) that read or write files or bypass memory safety."""

TEST_SEGMENTS: frozenset[str] = frozenset({"tests", "testing", "conftest"})
"""Module name parts of test suites shipped inside packages (they import pytest, subprocess)."""

MODULE_LEVEL_BUILTINS: frozenset[str] = frozenset(
    {
        "frozenset",
        "set",
        "tuple",
        "list",
        "dict",
        "range",
        "int",
        "float",
        "str",
        "bool",
        "complex",
        "len",
        "min",
        "max",
        "abs",
        "round",
        "sum",
        "sorted",
        "zip",
        "enumerate",
        "reversed",
    }
)
"""Pure builtins a module-level constant may call (``STOP = frozenset({...})``)."""

DUNDER_METHODS: frozenset[str] = frozenset({"__init__", "__call__"})
"""Dunder methods a class in a program may define."""


class ProgramRejected(CandidateError):
    """A program file broke a constraint (status ``rejected``); ``reason`` starts with its name."""

    def __init__(self, reason: str) -> None:
        super().__init__(Status.REJECTED, reason)

    def __str__(self) -> str:  # the reason already names the constraint
        return self.reason

    @property
    def constraint(self) -> str:
        """The constraint named at the start of the reason (``no-external-model``, ...)."""
        return self.reason.split(":", 1)[0]


def is_dunder(name: str) -> bool:
    """Whether ``name`` is a dunder (``__x__``) name."""
    return len(name) > 4 and name.startswith("__") and name.endswith("__")
