"""Segmenters for scripts written without spaces, side by side: speed, tokens, selectivity.

The measurement behind the ``unicode`` tokenizer's choice of overlapping letter bigrams for
Han, Kana and Thai (docs/multilingual.md). It reads only the documents of the five
multilingual tasks (never their queries' judgements: these tasks are transfer-only, so no
retrieval score may choose anything) and, for each segmenter, reports:

* ``chars/s``: characters tokenised per second over the whole corpus (no cache);
* ``tok/doc``: tokens per document;
* ``vocab``: distinct tokens over the corpus;
* ``idf``: mean BM25 IDF ``log(1 + (N - df + 0.5) / (df + 0.5))`` of the tokens of a
  document, averaged over documents: how selective a segmenter's tokens are (a token in
  every document carries no evidence), computed from the corpus alone.

Segmenters: ``letters`` (one token per letter of an unspaced script, the tokenizer before),
``unicode`` (overlapping bigrams, as Lucene's CJKAnalyzer), ``ascii`` (the paper's), and
``icu`` (ICU's dictionary word break, as Elasticsearch's ``icu_tokenizer`` and Lucene's Thai
analyzer segment) when PyICU is importable; it is not a dependency of embedding-ttc, so the
row reads "not installed" otherwise. Run::

    .venv/bin/python benchmarks/segmenters.py [--data-dir ../shared/datasets] [--repeat 3]

The English row times the ASCII fast path on scifact's documents, the path of the deployed
LexicalHybridRRF, under each tokenizer.
"""

from __future__ import annotations

import argparse
import json
import math
import time
import unicodedata
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from embedding_ttc.programs.primitives.tokenizers import IGNORABLE, get_tokenizer

TASKS = ("cmrc2018_zh", "jaquad_ja", "arcd_ar", "xquad_ru", "xquad_th", "scifact")


def icu_segmenter() -> Callable[[str], tuple[str, ...]] | None:
    """ICU word break (root locale, dictionaries for Han, Kana and Thai), or ``None``."""
    try:
        import icu  # type: ignore[import-not-found]
    except ImportError:
        return None
    breaker = icu.BreakIterator.createWordInstance(icu.Locale.getRoot())
    table = str.maketrans(dict.fromkeys(map(ord, IGNORABLE)))

    def split(text: str) -> tuple[str, ...]:
        folded = unicodedata.normalize("NFKC", text).casefold().translate(table)
        breaker.setText(folded)
        out = []
        start = breaker.first()
        for end in breaker:
            # rule status 0..99: none (spaces, punctuation); 100+: numbers, letters, kana, ideo
            if breaker.getRuleStatus() >= 100:
                out.append(folded[start:end])
            start = end
        return tuple(out)

    return split


def read_docs(root: Path, task: str) -> list[str]:
    """The documents of a task, title and text joined as the programs see them."""
    lines = (root / task / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    return [f"{r.get('title', '')} {r['text']}".strip() for r in rows]


def measure(split: Callable[[str], tuple[str, ...]], docs: list[str], repeat: int) -> dict:
    """Speed (best of ``repeat``), tokens per document, vocabulary and mean IDF."""
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        tokens = [split(d) for d in docs]
        best = min(best, time.perf_counter() - start)
    df = Counter(t for doc in tokens for t in set(doc))
    n = len(docs)
    idf = {t: math.log1p((n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
    per_doc = [sum(idf[t] for t in doc) / len(doc) for doc in tokens if doc]
    return {
        "chars_per_s": sum(map(len, docs)) / best,
        "tokens_per_doc": sum(map(len, tokens)) / n,
        "vocabulary": len(df),
        "mean_idf": sum(per_doc) / len(per_doc) if per_doc else 0.0,
        "empty_docs": sum(not doc for doc in tokens),
    }


def main() -> None:
    """Print one table row per task and segmenter, then the rows as JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/datasets"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    segmenters: dict[str, Callable[[str], tuple[str, ...]] | None] = {
        name: get_tokenizer(name).split for name in ("ascii", "letters", "unicode")
    }
    segmenters["icu"] = icu_segmenter()
    rows = []
    header = f"{'task':<12} {'segmenter':<8} {'chars/s':>11} {'tok/doc':>8} {'vocab':>7} {'idf':>5}"
    print(header)
    for task in TASKS:
        docs = read_docs(args.data_dir, task)
        for name, split in segmenters.items():
            if split is None:
                print(f"{task:<12} {name:<8} not installed (pip install PyICU)")
                continue
            m = measure(split, docs, args.repeat)
            rows.append({"task": task, "segmenter": name, **m})
            print(
                f"{task:<12} {name:<8} {m['chars_per_s']:>11,.0f} {m['tokens_per_doc']:>8.1f} "
                f"{m['vocabulary']:>7} {m['mean_idf']:>5.2f}"
            )
    for row in rows:
        print(json.dumps(row))


if __name__ == "__main__":
    from data_errors import run

    raise SystemExit(run(main))
