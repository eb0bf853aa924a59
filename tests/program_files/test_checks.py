"""Static checks: one test per rejection reason, valid programs pass, hostile files are refused."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import pytest

from embedding_ttc.program_files.checks.imports import module_allowed
from embedding_ttc.program_files.checks.rules import (
    CONTEXT_FIELDS,
    DEPLOY_ONLY_FIELDS,
    MAX_SOURCE_BYTES,
    ProgramRejected,
)
from embedding_ttc.program_files.checks.source import ParsedProgram, check_source
from embedding_ttc.program_files.contract import CONSTRAINTS
from embedding_ttc.programs.base import Context
from embedding_ttc.programs.outcome import CandidateError, Status

PROGRAMS = Path(__file__).parent / "programs"

HEADER = "import numpy as np\n\n\n"
BODY = "def program(Q, D, S, ctx):\n    return S.copy()\n"


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def rejected(source: str, **kwargs: object) -> ProgramRejected:
    with pytest.raises(ProgramRejected) as info:
        check_source(source, **kwargs)  # type: ignore[arg-type]
    return info.value


def assert_rejected(source: str, constraint: str, *fragments: str, **kwargs: object) -> None:
    exc = rejected(source, **kwargs)
    assert isinstance(exc, CandidateError) and exc.status == Status.REJECTED
    assert str(exc) == exc.reason  # the reason already names the constraint
    assert exc.reason.startswith(f"{constraint}: "), exc.reason
    assert exc.constraint == constraint
    for fragment in fragments:
        assert fragment in exc.reason, exc.reason


def test_constraint_names_are_the_interface_ones() -> None:
    names = {name for name, _ in CONSTRAINTS}
    assert {"task-universal", "global-constants", "deterministic", "no-external-model"} <= names


def test_context_fields_match_the_context_class() -> None:
    fields = {f.name for f in dataclasses.fields(Context)} | {"doc_lengths"}
    assert fields - DEPLOY_ONLY_FIELDS == CONTEXT_FIELDS
    assert fields >= DEPLOY_ONLY_FIELDS and not DEPLOY_ONLY_FIELDS & CONTEXT_FIELDS
    assert_rejected(
        "def program(Q, D, S, ctx):\n    return S * (ctx.scored_rows or 1)\n",
        "task-universal",
        "scored_rows",
    )
    assert_rejected(
        "def program(Q, D, S, ctx):\n    return S if ctx.deployed is None else S * 2\n",
        "task-universal",
        "ctx.deployed at line 2 is not a Context field",
    )


@pytest.mark.parametrize(
    ("name", "allowed"),
    [
        ("numpy", True),
        ("numpy.linalg", True),
        ("collections.abc", True),
        ("embedding_ttc.programs.primitives", True),
        ("embedding_ttc.programs.primitives.scores", True),
        ("embedding_ttc.programs", False),
        ("embedding_ttc", False),
        ("numpyx", False),
        ("os", False),
    ],
)
def test_module_allowed(name: str, allowed: bool) -> None:
    assert module_allowed(name) is allowed


# --- valid programs -------------------------------------------------------------------------


@pytest.mark.parametrize("filename", ["valid_zscore.py", "valid_encode.py", "valid_bm25.py"])
def test_valid_program_files_pass(filename: str) -> None:
    source = (PROGRAMS / filename).read_text()
    parsed = check_source(source, task_names=["scifact", "nfcorpus"])
    assert isinstance(parsed, ParsedProgram)
    assert parsed.source == source
    assert parsed.tree.body


def test_a_program_in_the_style_of_a_proposer_passes() -> None:
    source = src(
        '''
        """Lexical bonus with a seeded jitter."""

        from __future__ import annotations

        import math
        import re
        from collections import Counter, namedtuple
        from functools import lru_cache

        import numpy as np
        from numpy.random import default_rng

        from embedding_ttc.programs.primitives import scores
        from embedding_ttc.programs.primitives.scores import zscore_rows

        WORD = re.compile(r"\\w+")
        STOP = frozenset("the a an of".split())
        ALPHA: float = np.float32(0.5)
        SCALE = math.log(2.0) * 3
        Pair = namedtuple("Pair", "q d")
        square = lambda x: x * x


        class Mixer:
            """Mixes two channels."""

            weight = 0.25

            def __init__(self, weight):
                self.weight = weight

            def __call__(self, a, b):
                return a + self.weight * b


        @lru_cache(maxsize=None)
        def words(text):
            return tuple(w for w in WORD.findall(text.lower()) if w not in STOP)


        def program(Q, D, S, ctx):
            rng = default_rng(7)
            jitter = np.random.default_rng(seed=3).standard_normal(S.shape) * 1e-9
            id = 0  # a local name that shadows a builtin is fine for id/hash
            counts = [Counter(words(t)) for t in ctx.doc_texts]
            lex = np.array(
                [[sum(c[w] for w in words(q)) for c in counts] for q in ctx.query_texts],
                dtype=np.float32,
            )
            with ctx.index_time():
                extra = ctx.encode_fn(list(ctx.doc_texts), view="retrieval.passage")
            mixed = Mixer(ALPHA)(scores.zscore_rows(S), zscore_rows(lex))
            return (mixed + jitter + rng.random() * 0 + id + 0 * extra.sum()).astype(np.float32)
        '''
    )
    check_source(source, task_names=["scifact"])


# --- interface ------------------------------------------------------------------------------


def test_syntax_error_names_line_and_message() -> None:
    assert_rejected("def program(Q, D, S, ctx):\n    return (\n", "interface", "syntax error")
    exc = rejected("x = 1\ndef program(Q, D, S, ctx)\n    return S\n")
    assert "line 2" in exc.reason


def test_source_size_is_capped() -> None:
    filler = "#" * (MAX_SOURCE_BYTES + 1) + "\n"
    assert_rejected(filler + BODY, "interface", str(MAX_SOURCE_BYTES))


def test_source_that_is_not_utf8_text() -> None:
    assert_rejected(BODY + "X = '\udcff'\n", "interface", "UTF-8")


def test_nul_byte_is_rejected() -> None:
    assert_rejected(BODY + "X = 1\x00\n", "interface")


def test_absurd_nesting_is_rejected_not_crashing() -> None:
    deep = "X = " + "+".join(["1"] * 30000) + "\n"
    assert_rejected(deep + BODY, "interface")


def test_missing_program() -> None:
    assert_rejected("def main(Q, D, S, ctx):\n    return S\n", "interface", "program(Q, D, S, ctx)")


def test_program_nested_in_a_class_does_not_count() -> None:
    assert_rejected(
        "class A:\n    def program(self, Q, D, S, ctx):\n        return S\n", "interface"
    )


def test_program_defined_twice() -> None:
    assert_rejected(BODY + "\n" + BODY, "interface", "2 times")


def test_program_rebound_by_assignment() -> None:
    assert_rejected(BODY + "program = lambda Q, D, S, ctx: S\n", "interface", "2 times")


@pytest.mark.parametrize(
    "signature",
    ["(Q, D, S)", "(Q, D, S, ctx, extra)", "(Q, D, S, *ctx)", "(Q, D, S, ctx, *, k=1)", "(*a)"],
)
def test_program_takes_exactly_four_positional_parameters(signature: str) -> None:
    assert_rejected(f"def program{signature}:\n    return 0\n", "interface", "four positional")


def test_async_program() -> None:
    assert_rejected("async def program(Q, D, S, ctx):\n    return S\n", "interface", "plain")


# --- imports --------------------------------------------------------------------------------


def test_import_outside_the_allowed_modules() -> None:
    assert_rejected(
        "import os\n\n" + BODY, "no-external-model", "import of 'os'", "allowed: numpy, math"
    )


def test_import_inside_a_function_is_checked_too() -> None:
    source = "def program(Q, D, S, ctx):\n    import subprocess\n    return S\n"
    assert_rejected(source, "no-external-model", "'subprocess'", "line 2")


def test_from_import_outside_the_allowed_modules() -> None:
    assert_rejected("from embedding_ttc.encoders import base\n\n" + BODY, "no-external-model")


def test_relative_import() -> None:
    assert_rejected("from . import helpers\n\n" + BODY, "no-external-model", "relative")


def test_star_import() -> None:
    assert_rejected("from math import *\n\n" + BODY, "no-external-model", "import *")


def test_private_module() -> None:
    assert_rejected("import numpy._core\n\n" + BODY, "no-external-model", "private")
    assert_rejected(HEADER + "X = np._core\n" + BODY, "no-external-model", "private")


def test_submodules_of_allowed_modules_pass() -> None:
    source = "import numpy.random\nfrom numpy import linalg\nimport collections.abc\n\n" + BODY
    check_source(source)


@pytest.mark.parametrize("module", ["random", "time", "datetime", "uuid", "secrets"])
def test_nondeterministic_module_import(module: str) -> None:
    assert_rejected(f"import {module}\n\n" + BODY, "deterministic", f"'{module}'")


@pytest.mark.parametrize(
    "expr",
    [
        "np.load('x.npy')",
        "np.save('x.npy', S)",
        "np.fromfile('x')",
        "np.memmap('x')",
        "np.lib.stride_tricks.as_strided(S, (1,), (0,))",
        "np.ctypeslib",
    ],
)
def test_numpy_file_access_and_memory_escapes(expr: str) -> None:
    source = HEADER + f"def program(Q, D, S, ctx):\n    x = {expr}\n    return S\n"
    assert_rejected(source, "no-external-model")


def test_numpy_file_access_through_from_import() -> None:
    assert_rejected("from numpy import load\n\n" + BODY, "no-external-model", "numpy.load")


@pytest.mark.parametrize("attr", ["tofile", "ctypes", "as_strided"])
def test_unsafe_attributes_on_any_object(attr: str) -> None:
    source = f"def program(Q, D, S, ctx):\n    S.{attr}\n    return S\n"
    assert_rejected(source, "no-external-model", f".{attr}")


# --- module level ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "statement",
    [
        "if True:\n    X = 1\n",
        "for i in range(3):\n    pass\n",
        "try:\n    X = 1\nexcept Exception:\n    X = 2\n",
        "print('hello')\n",
        "with np.errstate(all='ignore'):\n    pass\n",
    ],
)
def test_module_level_statements_are_limited(statement: str) -> None:
    assert_rejected(HEADER + statement + BODY, "global-constants", "module-level")


def test_module_level_call_of_own_function() -> None:
    source = HEADER + "def make():\n    return 3\n\n\nK = make()\n" + BODY
    assert_rejected(source, "global-constants", "make(...)")


def test_module_level_assignment_to_an_attribute() -> None:
    assert_rejected(HEADER + "np.pi = 3\n" + BODY, "global-constants", "attribute")


def test_module_level_constants_that_pass() -> None:
    constants = (
        "K = 10\nALPHA = 0.5 * K\nNAMES = ('a', 'b')\nTABLE = {'a': 1}\n"
        "EPS = np.float32(1e-6)\nWORDS = frozenset('a b'.split())\nF = lambda x: x + 1\n"
    )
    check_source(HEADER + constants + BODY)


# --- names and attributes -------------------------------------------------------------------


@pytest.mark.parametrize(
    "expr",
    [
        "open('/etc/passwd')",
        "eval('1')",
        "exec('1')",
        "compile('1', 'x', 'eval')",
        "getattr(S, 'T')",
        "setattr(S, 'x', 1)",
        "globals()",
        "vars()",
        "input()",
        "breakpoint()",
        "memoryview(S)",
    ],
)
def test_forbidden_builtins(expr: str) -> None:
    source = f"def program(Q, D, S, ctx):\n    x = {expr}\n    return S\n"
    assert_rejected(source, "no-external-model", expr.split("(")[0])


def test_forbidden_name_even_when_rebound() -> None:
    source = "def program(Q, D, S, ctx):\n    vars = 3\n    return S + vars\n"
    assert_rejected(source, "no-external-model", "'vars'")


@pytest.mark.parametrize("name", ["__import__", "__builtins__", "__name__", "__file__"])
def test_dunder_names(name: str) -> None:
    source = f"def program(Q, D, S, ctx):\n    x = {name}\n    return S\n"
    assert_rejected(source, "no-external-model", name)


@pytest.mark.parametrize(
    "expr", ["S.__class__", "().__class__.__base__.__subclasses__()", "program.__globals__"]
)
def test_dunder_attributes(expr: str) -> None:
    source = f"def program(Q, D, S, ctx):\n    x = {expr}\n    return S\n"
    assert_rejected(source, "no-external-model", "attribute")


@pytest.mark.parametrize("attr", ["gi_frame", "f_back", "f_globals", "tb_frame", "co_code"])
def test_introspection_attributes(attr: str) -> None:
    source = f"def program(Q, D, S, ctx):\n    x = (i for i in []).{attr}\n    return S\n"
    assert_rejected(source, "no-external-model", attr)


def test_dunder_methods_other_than_init_and_call() -> None:
    ok = (
        "class A:\n    def __init__(self):\n        pass\n\n    def __call__(self):\n        pass\n"
    )
    check_source(ok + "\n\n" + BODY)
    bad = "class A:\n    def __getattr__(self, name):\n        return 1\n"
    assert_rejected(bad + "\n\n" + BODY, "no-external-model", "__getattr__")
    assert_rejected("def __init__():\n    pass\n\n\n" + BODY, "no-external-model", "__init__")


# --- task-universal -------------------------------------------------------------------------


def test_ctx_attribute_outside_the_context_fields() -> None:
    source = "def program(Q, D, S, ctx):\n    return S if ctx.task_name else S\n"
    assert_rejected(source, "task-universal", "ctx.task_name", "doc_texts")


def test_ctx_attribute_check_follows_the_parameter_name() -> None:
    source = "def program(Q, D, S, context):\n    return S if context.dataset else S\n"
    assert_rejected(source, "task-universal", "context.dataset")


def test_string_literal_naming_a_task() -> None:
    source = "def program(Q, D, S, ctx):\n    return S if 'SciFact' else S\n"
    assert_rejected(source, "task-universal", "'SciFact'", task_names=["scifact", "nfcorpus"])
    check_source(source, task_names=["nfcorpus"])


def test_task_name_inside_an_fstring() -> None:
    source = (
        "def program(Q, D, S, ctx):\n    x = f'nfcorpus{1}'\n    y = f'{1}nfcorpus'\n    return S\n"
    )
    assert_rejected(source, "task-universal", task_names=["nfcorpus"])


# --- deterministic --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expr",
    [
        "np.random.rand(3)",
        "np.random.default_rng()",
        "np.random.default_rng(len(S))",
        "np.random.seed(len(S))",
        "np.random.normal(size=3)",
        "np.random",
    ],
)
def test_numpy_global_random_state(expr: str) -> None:
    source = HEADER + f"def program(Q, D, S, ctx):\n    x = {expr}\n    return S\n"
    assert_rejected(source, "deterministic", "default_rng")


def test_numpy_random_through_from_imports() -> None:
    from_numpy = "from numpy import random\n\n\n" + BODY.replace(
        "return", "random.rand()\n    return"
    )
    assert_rejected(from_numpy, "deterministic")
    from_random = "from numpy.random import rand\n\n\n" + BODY.replace(
        "return", "rand()\n    return"
    )
    assert_rejected(from_random, "deterministic")
    aliased = "import numpy.random as npr\n\n\n" + BODY.replace("return", "npr.rand()\n    return")
    assert_rejected(aliased, "deterministic")


def test_seeded_numpy_random_passes() -> None:
    source = HEADER + (
        "def program(Q, D, S, ctx):\n"
        "    a = np.random.default_rng(0).random()\n"
        "    b = np.random.Generator(np.random.PCG64(1)).random()\n"
        "    np.random.seed(5)\n"
        "    return S + a + b\n"
    )
    check_source(source)


@pytest.mark.parametrize("builtin", ["hash", "id"])
def test_hash_and_id(builtin: str) -> None:
    source = f"def program(Q, D, S, ctx):\n    x = {builtin}(ctx.doc_ids[0])\n    return S\n"
    assert_rejected(source, "deterministic", f"'{builtin}()'")


# --- the hostile test programs are all caught before they run -------------------------------

HOSTILE = [
    "exit_code.py",
    "abort.py",
    "dunder_escape.py",
    "fork.py",
    "write_file.py",
    "write_file_swallowed.py",
    "read_file.py",
    "socket_connect.py",
    "read_env.py",
    "bogus_header.py",
    "import_new.py",
]


@pytest.mark.parametrize("filename", HOSTILE)
def test_hostile_program_files_are_rejected_statically(filename: str) -> None:
    exc = rejected((PROGRAMS / filename).read_text())
    assert exc.constraint in {"no-external-model", "deterministic"}


@pytest.mark.parametrize(
    "filename",
    ["infinite_loop.py", "memory_bomb_numpy.py", "wrong_shape.py", "nan_output.py", "raises.py"],
)
def test_programs_that_only_the_sandbox_can_judge_pass(filename: str) -> None:
    check_source((PROGRAMS / filename).read_text())
