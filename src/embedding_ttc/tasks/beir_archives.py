"""The BEIR datasets that ``embedding-ttc data fetch`` can download, with their checksums.

BEIR (Thakur et al., NeurIPS 2021 Datasets and Benchmarks) publishes each preprocessed
dataset as ``<name>.zip`` under :data:`BASE_URL`, holding ``<name>/corpus.jsonl``,
``<name>/queries.jsonl`` and ``<name>/qrels/<split>.tsv``.

Only archives whose MD5 is published are listed: an archive is checked before anything is
extracted, and a dataset without a known checksum could not be. The MD5s are those of the
"Available Datasets" table of the BEIR repository's README (github.com/beir-cellar/beir,
``md5`` column); the same values, with the archive sizes, are in ir_datasets 0.6.3
(``ir_datasets/etc/downloads.json``, section ``beir``, ``expected_md5`` and ``size_hint``).
Left out: the four datasets BEIR does not distribute (BioASQ, Signal-1M, TREC-NEWS,
Robust04) and CQADupStack, whose archive holds twelve forums, each its own task, rather than
one task folder. A BEIR-layout archive of any other name can still be installed from a file
or URL the user gives (``--from``); its SHA-256 is then recorded, unverified.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from embedding_ttc.registry import Registry

__all__ = [
    "ARCHIVES",
    "BASE_URL",
    "BASE_URL_ENV",
    "BeirArchive",
    "archive_url",
    "fetchable_names",
]

BASE_URL = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets"
# Another server with the same file names (a mirror, or a local one in tests).
BASE_URL_ENV = "EMBEDDING_TTC_BEIR_URL"


@dataclass(frozen=True)
class BeirArchive:
    """One downloadable BEIR dataset.

    Attributes:
        name: the BEIR name, also the archive's stem and the task folder's name.
        md5: the archive's published MD5 (hex).
        bytes: the archive's size, for progress and listings.

    """

    name: str
    md5: str
    bytes: int


ARCHIVES: Registry[BeirArchive] = Registry("BEIR dataset")
for _archive in (
    # name, md5 (BEIR README), bytes (ir_datasets downloads.json size_hint)
    BeirArchive("msmarco", "444067daf65d982533ea17ebd59501e4", 1_082_258_632),
    BeirArchive("trec-covid", "ce62140cb23feb9becf6270d0d1fe6d1", 73_876_720),
    BeirArchive("nfcorpus", "a89dba18a62ef92f7d323ec890a0d38d", 2_448_432),
    BeirArchive("nq", "d4d3d2e48787a744b6f6e691ff534307", 498_307_926),
    BeirArchive("hotpotqa", "f412724f78b0d91183a0e86805e16114", 654_025_350),
    BeirArchive("fiqa", "17918ed23cd04fb15047f73e6c3bd9d9", 17_948_027),
    BeirArchive("arguana", "8ad3e3c2a5867cdced806d6503f29b99", 3_773_617),
    BeirArchive("webis-touche2020", "46f650ba5a527fc69e0a6521c5a23563", 227_132_363),
    BeirArchive("quora", "18fb154900ba42a600f84b839c173167", 15_853_968),
    BeirArchive("dbpedia-entity", "c2a39eb420a3164af735795df012ac2c", 639_285_131),
    BeirArchive("scidocs", "38121350fc3a4d2f48850f6aff52e4a9", 142_471_588),
    BeirArchive("fever", "5a818580227bfb4b35bb6fa46d9b6c03", 1_236_988_269),
    BeirArchive("climate-fever", "8b66f0a9126c521bae2bde127b4dc99d", 1_228_666_652),
    BeirArchive("scifact", "5f7d1de60b170fc8027bb7898e2efca1", 2_816_079),
):
    ARCHIVES.register(_archive.name, _archive)


def archive_url(name: str, base_url: str | None = None) -> str:
    """``<base>/<name>.zip``: ``base_url``, else ``$EMBEDDING_TTC_BEIR_URL``, else BEIR's."""
    base = base_url or os.environ.get(BASE_URL_ENV) or BASE_URL
    return f"{base.rstrip('/')}/{name}.zip"


def fetchable_names(data_root: Path | None) -> list[str]:
    """The fetchable BEIR datasets that have no folder under ``data_root`` yet."""
    present = (
        {p.name for p in data_root.iterdir() if p.is_dir()}
        if data_root is not None and data_root.is_dir()
        else set()
    )
    return [name for name in ARCHIVES.names() if name not in present]
