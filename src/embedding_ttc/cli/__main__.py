"""``python -m embedding_ttc.cli``: the ``embedding-ttc`` command."""

import sys

from embedding_ttc.cli import main

sys.exit(main())
