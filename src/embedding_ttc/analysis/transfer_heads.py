"""The learned heads of a transfer run: trained (or reused) before the matrix is computed.

When ``LearnedHead`` is among a study's programs, each encoder with ``LearnedHead`` cells to
compute gets its head (App. C; :mod:`embedding_ttc.analysis.head_store`), trained on the
discovery tasks or reused from its stored record; the run is told of each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from embedding_ttc.analysis.cells import CellKey, CellStore
from embedding_ttc.analysis.groups import MatrixEnvironment
from embedding_ttc.analysis.head_store import HeadStore, prepare_heads
from embedding_ttc.analysis.heads import HeadConfig, embed_tasks
from embedding_ttc.analysis.plan import Plan
from embedding_ttc.analysis.transfer_config import TransferConfig
from embedding_ttc.analysis.transfer_events import HeadReady, HeadTraining, TransferEvent


def prepare_transfer_heads(
    config: TransferConfig,
    the_plan: Plan,
    compute: list[CellKey],
    store: CellStore,
    env: MatrixEnvironment,
    disc_tasks: list[str],
    tell: Callable[[TransferEvent], None],
) -> bool:
    """Train (or reuse) the learned head of every encoder with LearnedHead cells; say which.

    Returns whether a retrained head dropped stale cells.

    Without discovery tasks (``--discovery-suite none``) the stored heads are reused, whatever
    tasks they were trained on (:func:`~embedding_ttc.analysis.transfer_setup.resolve_study`
    made sure they exist).
    """

    def data(encoder: str) -> Any:
        tell(HeadTraining(encoder, len(disc_tasks)))
        return embed_tasks(env.encoder(encoder), [env.task(t) for t in disc_tasks])

    heads = HeadStore(config.out)  # the environment's heads_root
    tasks = disc_tasks or None
    dropped_any = False
    head_config = HeadConfig(seed=config.head_seed)
    for done in prepare_heads(the_plan, store, heads, head_config, data, tasks, compute):
        r = done.record
        dropped_any = dropped_any or bool(done.dropped)
        chosen = r.family(r.chosen)
        val = chosen.validation_ndcg_at_10 if chosen is not None else float("nan")
        record = heads.record_path(done.encoder)
        tell(HeadReady(done.encoder, done.reused, record, r.chosen, val, len(done.dropped)))
    return dropped_any
