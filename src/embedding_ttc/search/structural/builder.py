"""The text of a generated program as it is built: imports, constants, helpers, body lines.

Channels, fusions and feedback rounds each add what they need to a :class:`ProgramBuilder`;
:func:`~embedding_ttc.search.structural.render.render_program` assembles the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PRIMITIVES = "embedding_ttc.programs.primitives"


@dataclass
class ProgramBuilder:
    """What a generated program needs so far; every part asks for its imports and constants."""

    imports: dict[str, set[str]] = field(default_factory=dict)
    constants: list[str] = field(default_factory=list)
    helpers: dict[str, str] = field(default_factory=dict)
    body: list[str] = field(default_factory=list)
    done: set[str] = field(default_factory=set)

    def need(self, module: str, *names: str) -> None:
        """Import ``names`` from the primitives module ``module``."""
        self.imports.setdefault(f"{PRIMITIVES}.{module}", set()).update(names)

    def constant(self, *names: str) -> None:
        """Define the module constants ``names`` (once each)."""
        self.constants.extend(n for n in names if n not in self.constants)

    def lines(self, *lines: str) -> None:
        """Append lines to the body of ``program``."""
        self.body.extend(lines)


ROCCHIO_HELPER = '''\
def _rocchio_query(query, D, scores, mask):
    """Rocchio (1971): toward the top-K centroid, away from the bottom-K centroid."""
    top = top_k_indices(scores, FEEDBACK_K, mask)
    bottom = bottom_k_indices(scores, FEEDBACK_K, mask)
    positive = np.array([centroid(D, rows) for rows in top], dtype=np.float32)
    negative = np.array([centroid(D, rows) for rows in bottom], dtype=np.float32)
    return rocchio(
        query,
        positive.reshape(query.shape),
        negative.reshape(query.shape),
        alpha=1.0,
        beta=ROCCHIO_BETA,
        gamma=ROCCHIO_GAMMA,
    )
'''


def use_rocchio(b: ProgramBuilder) -> str:
    """Define the Rocchio helper (for a channel or a feedback round); return its name."""
    b.need("scores", "top_k_indices", "bottom_k_indices")
    b.need("feedback", "centroid", "rocchio")
    b.constant("FEEDBACK_K", "ROCCHIO_BETA", "ROCCHIO_GAMMA")
    b.helpers["_rocchio_query"] = ROCCHIO_HELPER
    return "_rocchio_query"
