"""The genome of a structural program: channels with normalisations, a fusion, feedback rounds.

A genome is written into its program's header as a ``Genome: {...}`` JSON line, and into the
novelty claim as a ``[genome ...]`` key, so the history says what has been tried. Genes added
to the space later are written only when they apply (the convex fusion's ``share``), so a
genome of the earlier space keeps its JSON and key, and its program its text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from embedding_ttc.search.structural.catalogue import CHANNELS

NORMALISATIONS: tuple[str, ...] = ("none", "row", "col", "both", "minmax", "local")
FUSIONS: tuple[str, ...] = ("rrf", "zsum", "wsum", "convex")
REFINEMENTS: tuple[str, ...] = ("rocchio", "softcentroid", "vprf")
SHARES: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
"""The grid of the convex fusion's ``share``: the total weight of the channels after the first."""
DEFAULT_SHARE = 0.5
"""The ``share`` of a genome whose fusion is not convex (canonical form; never rendered)."""
MAX_CHANNELS = 5
MAX_ROUNDS = 2
_GENOME_LINE = re.compile(r"^Genome:\s*(\{.*\})\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Genome:
    """A structural program: channels with their normalisations, a fusion, feedback rounds.

    Build it with :meth:`make`, which validates and puts it in canonical form (channels in
    catalogue order; the refinement fixed to the first when there is no round; the share
    fixed to :data:`DEFAULT_SHARE` unless the fusion is convex), so that two genomes that
    render the same code compare equal.

    Attributes:
        channels: ``(channel, normalisation)`` pairs, in the order of the channel catalogue
            (:data:`~embedding_ttc.search.structural.catalogue.CHANNELS`).
        fusion: one of :data:`FUSIONS`.
        rounds: feedback rounds, ``0 .. MAX_ROUNDS``.
        refine: the query refinement of the rounds, one of :data:`REFINEMENTS`.
        share: the convex fusion's total weight of the channels after the first, one of
            :data:`SHARES` (the first channel weighs ``1 - share``).

    """

    channels: tuple[tuple[str, str], ...]
    fusion: str
    rounds: int
    refine: str
    share: float = DEFAULT_SHARE

    @classmethod
    def make(
        cls,
        channels: Mapping[str, str],
        fusion: str = "rrf",
        rounds: int = 0,
        refine: str = REFINEMENTS[0],
        share: float = DEFAULT_SHARE,
    ) -> Genome:
        """A validated genome in canonical form.

        Args:
            channels: channel name -> normalisation.
            fusion: one of :data:`FUSIONS`.
            rounds: feedback rounds.
            refine: one of :data:`REFINEMENTS`.
            share: the convex fusion's share, one of :data:`SHARES` (ignored by the other
                fusions).

        Raises:
            ValueError: on an unknown name, a count out of range or a share off the grid.

        """
        unknown = [c for c in channels if c not in CHANNELS]
        if unknown:
            raise ValueError(f"unknown channels {unknown}; known: {', '.join(CHANNELS)}")
        bad = [n for n in channels.values() if n not in NORMALISATIONS]
        if bad or fusion not in FUSIONS or refine not in REFINEMENTS:
            raise ValueError(f"unknown normalisation, fusion or refinement: {bad, fusion, refine}")
        if not 2 <= len(channels) <= MAX_CHANNELS:
            raise ValueError(f"a genome has 2 to {MAX_CHANNELS} channels, got {len(channels)}")
        if not 0 <= rounds <= MAX_ROUNDS:
            raise ValueError(f"rounds must be in 0..{MAX_ROUNDS}, got {rounds}")
        if fusion == "convex" and share not in SHARES:
            raise ValueError(f"share must be one of {SHARES}, got {share}")
        ordered = tuple((c, channels[c]) for c in CHANNELS if c in channels)
        refine = refine if rounds else REFINEMENTS[0]
        share = SHARES[SHARES.index(share)] if fusion == "convex" else DEFAULT_SHARE
        return cls(ordered, fusion, rounds, refine, share)

    @property
    def names(self) -> tuple[str, ...]:
        """The channel names, in order."""
        return tuple(name for name, _ in self.channels)

    def key(self) -> str:
        """A compact, parseable form: ``dense:row+bm25:row|rrf|1|rocchio``.

        A convex fusion carries its share: ``dense:row+bm25:minmax|convex:0.3|0``.
        """
        fusion = f"convex:{self.share}" if self.fusion == "convex" else self.fusion
        parts = ["+".join(f"{c}:{n}" for c, n in self.channels), fusion, str(self.rounds)]
        return "|".join(parts + ([self.refine] if self.rounds else []))

    @classmethod
    def from_key(cls, key: str) -> Genome:
        """Parse :meth:`key`'s form.

        Raises:
            ValueError: if the key is malformed or names unknown parts.

        """
        parts = key.strip().split("|")
        if len(parts) not in (3, 4):
            raise ValueError(f"malformed genome key {key!r}")
        channels = dict(item.split(":", 1) for item in parts[0].split("+") if ":" in item)
        refine = parts[3] if len(parts) == 4 else REFINEMENTS[0]
        fusion, _, share = parts[1].partition(":")
        return cls.make(
            channels, fusion, int(parts[2]), refine, float(share) if share else DEFAULT_SHARE
        )

    def to_json(self) -> str:
        """The ``Genome:`` header line's JSON (``share`` only when the fusion is convex)."""
        data: dict[str, object] = {
            "channels": dict(self.channels),
            "fusion": self.fusion,
            "rounds": self.rounds,
            "refine": self.refine,
        }
        if self.fusion == "convex":
            data["share"] = self.share
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> Genome:
        """Parse :meth:`to_json`'s form.

        Raises:
            ValueError: if the JSON is malformed or names unknown parts.

        """
        data = json.loads(text)
        if not isinstance(data, dict) or not isinstance(data.get("channels"), dict):
            raise ValueError("a genome is a JSON object with a 'channels' object")
        return cls.make(
            {str(k): str(v) for k, v in data["channels"].items()},
            str(data.get("fusion", "rrf")),
            int(data.get("rounds", 0)),
            str(data.get("refine", REFINEMENTS[0])),
            float(data.get("share", DEFAULT_SHARE)),
        )


def genome_from_source(source: str) -> Genome | None:
    """The genome in a program's ``Genome: {...}`` header line, or ``None``."""
    match = _GENOME_LINE.search(source)
    if match is None:
        return None
    try:
        return Genome.from_json(match.group(1))
    except (ValueError, TypeError):
        return None


NORM_LABELS: Mapping[str, str] = {
    "none": "raw scores",
    "row": "row z-scores",
    "col": "column z-scores",
    "both": "column-then-row z-scores",
    "minmax": "per-query min-max",
    "local": "z-scores over the dense top-K",
}
FUSION_LABELS: Mapping[str, str] = {
    "rrf": "reciprocal rank fusion",
    "zsum": "a sum of row z-scores",
    "wsum": "a weighted sum",
    "convex": "a convex combination",
}


def fusion_label(genome: Genome) -> str:
    """How claims and titles name the genome's fusion (a convex one with its share)."""
    label = FUSION_LABELS[genome.fusion]
    if genome.fusion == "convex":
        label += f" (weight {genome.share} shared by the channels after the first)"
    return label


BASE_GENOME = Genome.make({"dense": "row", "bm25": "row"}, "rrf", 0)
"""Generation 1's genome: the dense cosine and BM25, fused by RRF (a sparse-dense hybrid)."""
