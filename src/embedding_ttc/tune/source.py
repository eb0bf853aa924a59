"""Where a tune run's task is loaded from (:class:`~embedding_ttc.tune.config.TaskSource`)."""

from __future__ import annotations

from pathlib import Path

from embedding_ttc.tasks.beir import load_beir_folder, load_judged_files
from embedding_ttc.tasks.catalog import check_choosable, load_task
from embedding_ttc.tasks.task import RetrievalTask
from embedding_ttc.tune.config import TuneConfig


def load_source(config: TuneConfig, data_dir: Path | None) -> RetrievalTask:
    """The run's task, loaded from where its configuration says.

    Raises:
        EmbeddingTTCError: the task cannot be loaded, or is transfer-only (held out or
            multilingual: never tuned on).

    """
    source = config.task
    if source.kind == "beir":
        task = load_beir_folder(Path(source.path or ""), source.name)
    elif source.kind == "files":
        task = load_judged_files(
            source.name,
            source.corpus or "",
            source.queries or "",
            source.qrels or "",
            id_field=source.fields.get("id"),
            text_field=source.fields.get("text"),
            title_field=source.fields.get("title"),
            skip_invalid=source.skip_invalid,
        )
    else:
        task = load_task(source.name, data_dir)
    check_choosable([task.name], "tune")
    return task
