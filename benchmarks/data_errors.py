"""What a benchmark says when its data is missing: the loader's sentence, not a traceback.

Every benchmark names its tasks (``--task``, ``--data-dir``); a task that is neither packaged
nor in a data folder raises the catalogue's error, which says how to get it (a ``--data-dir``,
``$EMBEDDING_TTC_DATA``, or ``embedding-ttc data fetch NAME``). :func:`run` prints that one
line and exits 2, as the command line does.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from embedding_ttc.errors import EmbeddingTTCError


def run(main: Callable[[], int | None]) -> int:
    """Run a benchmark's ``main``; a missing task or data folder ends it with its sentence."""
    try:
        return int(main() or 0)
    except (EmbeddingTTCError, FileNotFoundError) as exc:
        print(f"{Path(sys.argv[0]).name}: error: {exc}", file=sys.stderr)
        return 2
