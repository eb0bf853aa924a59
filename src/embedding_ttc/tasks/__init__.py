"""Retrieval tasks: the record, loaders (BEIR folders, pools, generated, MTEB) and suites."""

from embedding_ttc.tasks.task import RetrievalTask, join_title_text

__all__ = ["RetrievalTask", "join_title_text"]
