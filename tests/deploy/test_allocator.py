"""``retain_freed_memory``: freed arrays stay in the process for the next request (glibc)."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from embedding_ttc.cli.deploy import main as deploy_main
from embedding_ttc.deploy.allocator import MAX_RETAIN_MB, retain_freed_memory

GLIBC = platform.libc_ver()[0] == "glibc"

# A fresh process frees a 20 MB array, then reports the free bytes its heap keeps (mallinfo2).
PROBE = """
import ctypes, sys
import numpy as np
from embedding_ttc.deploy.allocator import retain_freed_memory
print(retain_freed_memory(int(sys.argv[1])))
FIELDS = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in FIELDS.split()]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
array = np.ones(20 << 18, dtype=np.float32)
array[::1024] = 2.0
del array
print(libc.mallinfo2().fordblks)
"""


def _kept_after_free(megabytes: int) -> tuple[bool, int]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(megabytes)], capture_output=True, text=True, check=True
    ).stdout.split()
    return out[0] == "True", int(out[1])


@pytest.mark.skipif(not GLIBC, reason="the thresholds are glibc's")
def test_freed_arrays_stay_in_the_heap_only_when_retained():
    applied, kept = _kept_after_free(64)
    assert applied and kept >= 20 << 20
    applied, kept = _kept_after_free(0)  # glibc's defaults: a 20 MB array is its own mapping
    assert not applied and kept < 20 << 20


def test_bounds():
    assert retain_freed_memory(0) is False
    for bad in (-1, MAX_RETAIN_MB + 1):
        with pytest.raises(ValueError, match="retained memory must be 0 to"):
            retain_freed_memory(bad)


def test_serve_refuses_a_bad_size_before_loading(tmp_path, capsys):
    pytest.importorskip("fastapi", reason="the serve extra is part of the dev extra")
    assert deploy_main(["serve", str(tmp_path), "--retain-memory-mb", "-5"]) == 2
    assert "--retain-memory-mb must be 0 to" in capsys.readouterr().err
