"""A program over an encoder as an mteb 2.x search model: ``mteb.evaluate(model, tasks)``.

mteb 2.x lets a retrieval model implement its search protocol (``mteb.models.SearchProtocol``:
``index(corpus, ...)``, then ``search(queries, ..., top_k)`` returning ``query id -> {doc id:
score}``) instead of only ``encode``. A program needs exactly that: the whole query × document
cosine matrix, and a metered ``encode_fn`` to encode more texts. :class:`MtebSearchModel` keeps
the corpus mteb indexes; on ``search`` it builds the split as a
:class:`~embedding_ttc.tasks.task.RetrievalTask` and runs the program through
:func:`~embedding_ttc.evaluation.evaluate.run_programs`, the path every evaluation takes, so
the ranking is the one :func:`~embedding_ttc.evaluation.evaluate.evaluate` gives on the same
data. mteb then scores it with its own metrics and writes its own result files.

The texts are the ones mteb's encoder wrappers would read (a document's title and text joined,
a query's instruction appended: :mod:`embedding_ttc.tasks.mteb_loader`), encoded under the
encoder's own views (``retrieval.query`` and ``retrieval.passage``), not mteb's per-task
prompts. mteb's ``encode_kwargs`` (``batch_size``) do not reach the encoder, which batches
itself. Reranking tasks (``top_ranked``) become pools: each query ranks its own candidates.

The judgements stay with mteb: the task handed to ``run_programs`` has none, so only the
ranking and its cost (:attr:`MtebSearchModel.costs`) are kept from the run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from embedding_ttc.encoders.base import Encoder
from embedding_ttc.errors import MissingExtraError
from embedding_ttc.evaluation.evaluate import run_programs
from embedding_ttc.evaluation.records import CostRecord
from embedding_ttc.programs.base import Program, program_source_sha256, program_version
from embedding_ttc.tasks.mteb_loader import (
    corpus_from_dataset,
    import_mteb,
    queries_from_dataset,
)
from embedding_ttc.tasks.task import RetrievalTask

__all__ = ["MtebSearchModel", "model_meta", "search_task"]

PURPOSE = "Running a program as an mteb model"
#: The organisation part of the mteb model name (mteb names models ``organisation/model``).
ORGANISATION = "embedding-ttc"
_UNSAFE = re.compile(r'[<>:"/\\|?*\0]')  # characters mteb keeps out of result paths


def _mteb_2() -> Any:
    """Import mteb, which must be 2.x (the search protocol); else an install hint."""
    mteb = import_mteb(PURPOSE)
    version = str(getattr(mteb, "__version__", "0"))
    major = version.split(".", 1)[0]
    if not major.isdigit() or int(major) < 2:
        raise MissingExtraError(f"mteb>=2 (found {version})", "mteb", PURPOSE)
    return mteb


def model_meta(encoder: Encoder, program: Program, *, shortlist: int | None = None) -> Any:
    """The ``mteb.ModelMeta`` of ``program`` run over ``encoder``.

    The model is named ``embedding-ttc/<encoder name>`` at the encoder's revision; the program
    (name, version, the sha256 of a program file's source) and a shortlist are its
    ``experiment_kwargs``, so mteb files each program's results in its own experiment folder,
    ``results/embedding-ttc__<encoder>/<revision>/experiments/<program...>/<Task>.json``.
    """
    _mteb_2()
    from mteb.models import ModelMeta

    info = encoder.info
    experiment: dict[str, Any] = {
        "program": program.name,
        "program_version": program_version(program),
    }
    digest = program_source_sha256(program)
    if digest is not None:
        experiment["program_sha256"] = digest[:12]
    if shortlist is not None:
        experiment["shortlist"] = shortlist
    return ModelMeta(
        loader=None,
        name=f"{ORGANISATION}/{info.name}",
        revision=_UNSAFE.sub("_", info.revision),
        release_date=None,
        languages=None,
        n_parameters=None,
        memory_usage_mb=None,
        max_tokens=info.max_length,
        embed_dim=info.dim,
        license=None,
        open_weights=None,
        public_training_code=None,
        public_training_data=None,
        framework=["NumPy"],
        similarity_fn_name=None,  # the program's scores, not a similarity of embeddings
        use_instructions=not info.collapsed,
        training_datasets=None,
        adapted_from=info.model_id,
        experiment_kwargs=experiment,
    )


def search_task(
    name: str,
    corpus: Any,
    queries: Any,
    *,
    top_ranked: Mapping[str, Sequence[str]] | None = None,
    exclude_self_hits: bool = False,
    metadata: Mapping[str, Any] | None = None,
) -> RetrievalTask:
    """One split mteb hands a search model, as a task without judgements.

    Args:
        name: the mteb task name.
        corpus: the corpus mteb indexed (``id``, ``title``, ``text`` rows).
        queries: the queries to search (``id``, ``text``, maybe ``instruction`` rows); mteb has
            already dropped those without a relevant document.
        top_ranked: for reranking tasks, ``query id -> candidate doc ids`` (become pools).
        exclude_self_hits: drop a document whose id is the query's from its ranking.
        metadata: provenance to record.

    """
    docs = corpus_from_dataset(corpus)
    texts = queries_from_dataset(queries)
    query_ids = [str(q) for q in texts]
    pools = None
    if top_ranked is not None:
        pools = {q: tuple(str(d) for d in top_ranked.get(q, ())) for q in query_ids}
    return RetrievalTask(
        name=name,
        doc_ids=tuple(docs),
        doc_titles=tuple(d["title"] for d in docs.values()),
        doc_bodies=tuple(d["text"] for d in docs.values()),
        query_ids=tuple(query_ids),
        query_texts=tuple(texts[q] for q in query_ids),
        qrels=MappingProxyType({}),  # mteb holds the judgements and scores the ranking
        pools=None if pools is None else MappingProxyType(pools),
        exclude_self_hits=exclude_self_hits,
        source="mteb",
        metadata=MappingProxyType(dict(metadata or {})),
    )


class MtebSearchModel:
    """A program run over an encoder, as an mteb 2.x search model.

    Args:
        encoder: the frozen encoder (wrap it in
            :class:`~embedding_ttc.encoders.cache.CachedEncoder` to reuse embeddings); a model
            loaded in Python is wrapped with
            :meth:`~embedding_ttc.encoders.sentence_transformers.SentenceTransformerEncoder.
            from_model`.
        program: the program (a library program by name, e.g. ``"P0"``, or a program object).
        shortlist: rerank only each query's best ``shortlist`` dense candidates, as
            ``evaluate --shortlist`` does.
        exclude_self_hits: drop a document whose id is the query's from that query's ranking
            before the program sees the candidates (mteb's ``ignore_identical_ids``, ArguAna);
            ``None``: the flag of the task mteb registers under that name (``False`` for a task
            mteb does not know).

    Attributes:
        mteb_model_meta: the model's ``mteb.ModelMeta`` (see :func:`model_meta`).
        costs: per ``(task, subset, split)`` searched, the encoder work of the run (texts
            encoded at base and program stage, cost ratio).

    Raises:
        MissingExtraError: mteb 2.x is not installed (``pip install -e '.[mteb]'``).

    """

    def __init__(
        self,
        encoder: Encoder,
        program: Program | str = "P0",
        *,
        shortlist: int | None = None,
        exclude_self_hits: bool | None = None,
    ) -> None:
        from embedding_ttc.programs.catalog import get_program

        self._mteb = _mteb_2()
        self.encoder = encoder
        self.program: Program = get_program(program) if isinstance(program, str) else program
        self.shortlist = shortlist
        self.exclude_self_hits = exclude_self_hits
        self.mteb_model_meta = model_meta(encoder, self.program, shortlist=shortlist)
        self.costs: dict[tuple[str, str, str], CostRecord] = {}
        self._corpus: Any = None

    def index(self, corpus: Any, *, task_metadata: Any, **kwargs: Any) -> None:
        """Keep the corpus: it is encoded with the queries, when ``search`` runs the program."""
        self._corpus = corpus

    def search(
        self,
        queries: Any,
        *,
        task_metadata: Any,
        hf_split: str,
        hf_subset: str,
        top_k: int,
        top_ranked: Mapping[str, Sequence[str]] | None = None,
        **kwargs: Any,
    ) -> dict[str, dict[str, float]]:
        """Run the program on the indexed corpus and ``queries``; each query's best ``top_k``.

        Ties are broken by document id, descending (trec_eval's order, which mteb's
        pytrec_eval also applies when it sorts the scores returned here).
        """
        if self._corpus is None:
            raise ValueError("index() the corpus before search()")
        name = str(task_metadata.name)
        task = search_task(
            name,
            self._corpus,
            queries,
            top_ranked=top_ranked,
            exclude_self_hits=self._self_hits(name),
            metadata={"mteb_task": name, "split": hf_split, "subset": hf_subset},
        )
        run = next(run_programs([self.program], task, self.encoder, shortlist=self.shortlist))
        self.costs[(name, hf_subset, hf_split)] = run.result.cost
        return {
            qid: dict(zip(doc_ids, scores, strict=True))
            for qid, doc_ids, scores in run.rankings(top_k)
        }

    def _self_hits(self, task_name: str) -> bool:
        if self.exclude_self_hits is not None:
            return self.exclude_self_hits
        try:
            registered = self._mteb.get_task(task_name)
        except KeyError:  # a task built in Python, unknown to mteb's registry
            return False
        return bool(getattr(registered, "ignore_identical_ids", False))

    def __repr__(self) -> str:
        return f"MtebSearchModel(encoder={self.encoder.info.name!r}, program={self.program.name!r})"
