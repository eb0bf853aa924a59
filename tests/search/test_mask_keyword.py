"""name_mask: a mask passed to rrf or fuse by position is passed by keyword, nothing else moves."""

from __future__ import annotations

import numpy as np
import pytest

from embedding_ttc.programs.primitives.channels import fuse
from embedding_ttc.programs.primitives.scores import rrf
from embedding_ttc.search.precheck.mask_keyword import name_mask

HEADER = (
    "from embedding_ttc.programs.primitives.channels import fuse\n"
    "from embedding_ttc.programs.primitives.scores import RRF_K, rrf\n\n"
)


def test_a_positional_mask_is_named_and_no_other_byte_changes():
    source = HEADER + (
        "def program(Q, D, S, ctx):\n"
        '    label = "é"  # a wide character before the call shifts byte offsets\n'
        '    a = rrf([S, S.T @ S], mask, RRF_K, "first")  # three positional\n'
        "    b = fuse(\n"
        "        [S, a],\n"
        "        [1.0, 0.5],\n"
        "        mask,  # keep me\n"
        '        "rrf",\n'
        "    )\n"
        "    return fuse([a, b], None, mask) if label else rrf([S], mask=mask)\n"
    )
    rewritten, notes = name_mask(source)
    assert rewritten == (
        HEADER + "def program(Q, D, S, ctx):\n"
        '    label = "é"  # a wide character before the call shifts byte offsets\n'
        '    a = rrf([S, S.T @ S], mask=mask, k=RRF_K, ties="first")  # three positional\n'
        "    b = fuse(\n"
        "        [S, a],\n"
        "        [1.0, 0.5],\n"
        "        mask=mask,  # keep me\n"
        '        method="rrf",\n'
        "    )\n"
        "    return fuse([a, b], None, mask=mask) if label else rrf([S], mask=mask)\n"
    )
    assert notes == (
        "passed mask=mask, k=RRF_K, ties='first' to rrf by keyword",
        "passed mask=mask, method='rrf' to fuse by keyword",
        "passed mask=mask to fuse by keyword",
    )
    assert name_mask(rewritten) == (rewritten, ())


def test_aliases_and_module_attributes_are_followed():
    source = (
        "from embedding_ttc.programs.primitives import scores\n"
        "from embedding_ttc.programs.primitives.scores import rrf as ranks_fused\n"
        "import embedding_ttc.programs.primitives.channels as ch\n\n"
        "def program(Q, D, S, ctx):\n"
        "    m = None\n"
        "    return scores.rrf([S], m) + ranks_fused([S], m) + ch.fuse([S], None, m)\n"
    )
    rewritten, notes = name_mask(source)
    assert rewritten.endswith(
        "    return scores.rrf([S], mask=m) + ranks_fused([S], mask=m)"
        " + ch.fuse([S], None, mask=m)\n"
    )
    assert len(notes) == 3


@pytest.mark.parametrize(
    "source",
    [
        # its own rrf: not the primitive
        "def rrf(channels, mask):\n    return channels[0]\n\n"
        "def program(Q, D, S, ctx):\n    return rrf([S], None)\n",
        # no import at all (the import repair adds one first)
        "def program(Q, D, S, ctx):\n    return rrf([S], None)\n",
        # another library's fuse
        "import ranx\n\ndef program(Q, D, S, ctx):\n    return ranx.fuse([S], [1.0], None)\n",
        # a parameter named like the primitive shadows it
        HEADER + "def program(Q, D, S, ctx, rrf=None):\n    return rrf([S], None)\n",
        # the mask already by keyword, or weights only
        HEADER + "def program(Q, D, S, ctx):\n    return fuse([S], [1.0], mask=None)\n",
        # a call that is a TypeError either way is not guessed at
        HEADER + "def program(Q, D, S, ctx):\n    return rrf([S], None, mask=None)\n",
        HEADER + "def program(Q, D, S, ctx):\n    return rrf([S], *extra)\n",
        # does not parse
        "def program(:\n    return rrf([S], mask)\n",
    ],
)
def test_left_alone(source):
    assert name_mask(source) == (source, ())


def test_a_rewrite_that_would_not_parse_to_the_same_call_changes_nothing():
    # A parenthesised argument: inserting the name would land inside the parentheses.
    source = HEADER + "def program(Q, D, S, ctx):\n    return rrf([S], (None))\n"
    assert name_mask(source) == (source, ())


def test_the_rewritten_program_computes_the_same_scores():
    source = HEADER + (
        "def program(Q, D, S, ctx):\n"
        "    mask = S > 0.1\n"
        "    return fuse([S, rrf([S, S * S], mask, 10)], [1.0, 2.0], mask)\n"
    )
    rewritten, _ = name_mask(source)
    S = np.random.default_rng(0).random((4, 9)).astype(np.float32)
    mask = S > 0.1
    expected = fuse([S, rrf([S, S * S], mask=mask, k=10)], [1.0, 2.0], mask=mask)
    namespace: dict[str, object] = {}
    exec(compile(rewritten, "<program>", "exec"), namespace)
    got = namespace["program"](None, None, S, None)  # type: ignore[operator]
    np.testing.assert_array_equal(got, expected)
    with pytest.raises(TypeError, match="positional"):
        exec(compile(source, "<program>", "exec"), namespace)
        namespace["program"](None, None, S, None)  # type: ignore[operator]
