"""The pre-check's synthetic task: twelve short documents and five queries, written in code.

Tiny on purpose: a sandboxed run on it takes about a second, so a drafted program's shape,
indexing and name errors show up before the real evaluation.
"""

from __future__ import annotations

import functools

from embedding_ttc.tasks.task import RetrievalTask

_DOCUMENTS: tuple[tuple[str, str], ...] = (
    (
        "Solar panels",
        "Solar panels turn sunlight into electricity. Their output falls on cloudy days. "
        "Most rooftop panels last about twenty-five years.",
    ),
    (
        "",
        "A battery stores the electricity that solar panels produce during the day. At night "
        "the house draws power from the battery.\n\nLithium batteries lose capacity as they "
        "age.",
    ),
    (
        "Wind turbines",
        "Wind turbines produce electricity when the wind blows. Offshore turbines face "
        "stronger and steadier wind than turbines on land.",
    ),
    (
        "River floods",
        "Heavy rain makes a river rise above its banks. Floods damage houses and farms near "
        "the river. Levees and wetlands slow the water down.",
    ),
    (
        "",
        "Farmers near the river plant crops after the flood season. The flood leaves fertile "
        "soil on the fields.",
    ),
    (
        "Drought",
        "A drought is a long period without rain. Crops fail and rivers shrink.",
    ),
    (
        "Income tax",
        "Income tax is paid on wages and on profits. The tax rate rises with income. Net "
        "income was $ 5,363 in 2023.",
    ),
    (
        "",
        "A tax deduction lowers the income on which tax is paid. Gifts to charity are a "
        "common deduction.",
    ),
    (
        "Company profits",
        "The company reported higher profits this year. Revenue grew while costs stayed flat. "
        "Profits are taxed at the corporate rate.",
    ),
    (
        "Proteins",
        "A protein folds into a shape that decides its function. Misfolded proteins cause disease.",
    ),
    ("", "Enzymes are proteins that speed up chemical reactions in the cell."),
    (
        "Cell division",
        "A cell copies its DNA before it divides. Errors in the copy can cause disease. The "
        "new cells share the same proteins.",
    ),
)

_QUERIES: tuple[tuple[str, str, dict[str, int]], ...] = (
    ("q1", "how do solar panels store electricity at night", {"d01": 1, "d02": 2}),
    ("q2", "river flood damage to farms", {"d04": 2, "d05": 1}),
    ("q3", "how is income tax on profits paid", {"d07": 2, "d08": 1, "d09": 1}),
    ("q4", "what do proteins do in the cell", {"d10": 1, "d11": 2, "d12": 1}),
    ("q5", "wind power", {"d03": 1}),
)

_POOL_SIZE = 6


@functools.cache
def synthetic_task(*, pool: bool = False) -> RetrievalTask:
    """A tiny deterministic retrieval task, written out in code.

    Twelve documents of one to three sentences over four topics that share vocabulary
    (electricity, rivers, tax, proteins; one with a paragraph break, one with numbers), and
    five queries with graded judgements.

    Args:
        pool: give every query a pool of :data:`_POOL_SIZE` candidates (its relevant
            documents and the next ones in corpus order), as a reranking task does.

    """
    doc_ids = [f"d{i:02d}" for i in range(1, len(_DOCUMENTS) + 1)]
    pools = None
    if pool:
        pools = {}
        for qid, _, rel in _QUERIES:
            first = doc_ids.index(min(rel))
            pools[qid] = [doc_ids[(first + k) % len(doc_ids)] for k in range(_POOL_SIZE)]
    return RetrievalTask(
        name="synthetic-pool" if pool else "synthetic",
        doc_ids=doc_ids,
        doc_titles=[t for t, _ in _DOCUMENTS],
        doc_bodies=[b for _, b in _DOCUMENTS],
        query_ids=[q for q, _, _ in _QUERIES],
        query_texts=[t for _, t, _ in _QUERIES],
        qrels={q: dict(rel) for q, _, rel in _QUERIES},
        pools=pools,
        source="synthetic",
    )
