"""Keeping freed memory for the next request: glibc malloc's thresholds, set by the service.

A request to a chunked program gathers its candidates' chunk embeddings into new arrays of
several megabytes (about 30 MB over 1,000 candidates for LexicalHybridRRF) and frees them when
it answers. With glibc's defaults, memory freed at the top of the heap beyond the trim
threshold goes back to the kernel, and arrays above the (self-adjusting) mmap threshold are
mapped and unmapped whole, so the next request's arrays are fresh pages again: each 4 KB page
is faulted in and zeroed on first write: about 30 % of LexicalHybridRRF's per-query algebra
at 1,000 candidates (the latency benchmark, ``--retain-memory-mb 0`` against the default).

:func:`retain_freed_memory` fixes both thresholds, as ``MALLOC_MMAP_THRESHOLD_`` and
``MALLOC_TRIM_THRESHOLD_`` would from the environment (``mallopt(3)``): allocations up to the
given size come from the heap, and up to that much freed memory is kept for reuse. The cost is
resident memory: a serving process keeps up to that much more than it holds live. Other C
libraries (macOS, musl) have their own policies, left as they are.
"""

from __future__ import annotations

import ctypes
import platform

M_TRIM_THRESHOLD = -1
"""``mallopt``'s parameter for the free memory kept at the top of the heap (malloc.h)."""
M_MMAP_THRESHOLD = -3
"""``mallopt``'s parameter for the size above which an allocation is its own mapping."""

DEFAULT_RETAIN_MB = 256
"""The service's default: a request's arrays at 1,000 candidates fit several times over."""
MAX_RETAIN_MB = ((1 << 31) - 1) >> 20
"""The most :func:`retain_freed_memory` takes: ``mallopt`` takes a C ``int`` of bytes."""


def retain_freed_memory(megabytes: int) -> bool:
    """Keep up to ``megabytes`` of freed memory for reuse (0: leave the C library's defaults).

    Returns whether the thresholds were set: ``False`` for 0 and on a C library other than
    glibc.

    Raises:
        ValueError: ``megabytes`` is negative or above :data:`MAX_RETAIN_MB`.
        OSError: glibc refused a threshold.

    """
    if not 0 <= megabytes <= MAX_RETAIN_MB:
        raise ValueError(f"retained memory must be 0 to {MAX_RETAIN_MB} MB, got {megabytes}")
    if megabytes == 0 or platform.libc_ver()[0] != "glibc":
        return False
    libc = ctypes.CDLL(None)
    size = megabytes << 20
    for param, name in (
        (M_MMAP_THRESHOLD, "M_MMAP_THRESHOLD"),
        (M_TRIM_THRESHOLD, "M_TRIM_THRESHOLD"),
    ):
        if libc.mallopt(ctypes.c_int(param), ctypes.c_int(size)) != 1:
            raise OSError(f"glibc refused mallopt({name}, {size})")
    return True
