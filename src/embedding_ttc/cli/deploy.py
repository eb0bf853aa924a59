"""The ``index`` commands (build, add, compact, ann) and ``serve``: thin wiring of ``deploy``.

``index build`` deploys a library program (``--program NAME``) or a program file found by the
search (``--program-file F``: checked statically, its recipe derived at build time, its source
stored in the index and served in the sandbox; :mod:`embedding_ttc.deploy.program_file`).
``add_deploy_commands(sub)`` adds them to the ``embedding-ttc`` parser; ``python -m
embedding_ttc.cli.deploy`` runs them on their own.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from embedding_ttc.cli.common import add_data_dir, add_device, add_tokenizer, stage_progress
from embedding_ttc.encoders.threads import set_torch_threads
from embedding_ttc.errors import EmbeddingTTCError

if TYPE_CHECKING:
    from embedding_ttc.tasks.corpus_records import Document


SERVE_THREADS = 1
"""``serve``'s default torch intra-op threads per worker: a /v1/rerank over 100 candidates took
about 1 s with torch's default threads on two busy cores and 0.04 s with one."""


def set_threads(n: int | None) -> None:
    """``--threads``: limit torch's intra-op threads (a busy host thrashes with many)."""
    if n is not None and n < 1:
        raise EmbeddingTTCError(f"--threads must be at least 1, got {n}")
    set_torch_threads(n)


def _say(text: str) -> None:
    print(f"embedding-ttc: {text}", file=sys.stderr)


def _task_names(args: argparse.Namespace) -> tuple[str, ...]:
    """Task names a program file must not name (its task-universal check), as evaluate does."""
    from embedding_ttc.errors import DatasetError
    from embedding_ttc.tasks.catalog import available_task_names, find_data_root

    given = (args.task,) if args.task else ()
    try:
        return (*available_task_names(find_data_root(args.data_dir)), *given)
    except DatasetError:  # --data-dir names no folder (a corpus file build needs none)
        return given


def _program(args: argparse.Namespace) -> Any:
    """The program to build: a library name, or a program file read and checked."""
    if args.program_file is not None:
        from embedding_ttc.deploy.program_file import read_deployable

        return read_deployable(args.program_file, task_names=_task_names(args))
    from embedding_ttc.programs.catalog import recipe_for

    name = args.program or "P0"
    recipe_for(name)  # an unknown program fails before any loading
    return name


def _check_executor(args: argparse.Namespace) -> None:
    """Refuse an unknown executor, a missing ``ray`` extra or a stray Ray flag before loading."""
    from embedding_ttc.encoders.sharded import PURPOSE
    from embedding_ttc.executors import check_executor, import_ray

    if check_executor(args.executor) == "ray":
        import_ray(PURPOSE)
        if args.shard_size < 1:
            raise EmbeddingTTCError(f"--shard-size must be at least 1, got {args.shard_size}")
    elif args.ray_address:
        raise EmbeddingTTCError("index build: --ray-address is for --executor ray")


@contextmanager
def _build_encoder(args: argparse.Namespace) -> Iterator[Any]:
    """The build's encoder: loaded here, or (``--executor ray``) sharded over Ray tasks."""
    if args.executor == "inprocess":
        from embedding_ttc.cli.common import build_encoder

        yield build_encoder(args.encoder, args.cache_dir, args.no_cache, device=args.device)
        return
    from embedding_ttc.encoders.named import NamedEncoder
    from embedding_ttc.encoders.sharded import sharded_encoder

    named = NamedEncoder(args.encoder, "torch", args.cache_dir, not args.no_cache, args.device)
    with sharded_encoder(
        named, shard_size=args.shard_size, address=args.ray_address, threads=args.threads
    ) as encoder:
        yield encoder


def _read_corpus_args(args: argparse.Namespace) -> list[Document]:
    """``--corpus`` read with its field flags; skipped records are counted on stderr."""
    from embedding_ttc.deploy.corpus import check_new_documents
    from embedding_ttc.tasks.corpus_records import read_corpus_file

    read = read_corpus_file(
        args.corpus,
        id_field=args.id_field,
        text_field=args.text_field,
        title_field=args.title_field,
        skip_invalid=args.skip_invalid,
    )
    if read.skipped:
        _say(f"skipped {read.skipped} invalid record(s) of {args.corpus} (--skip-invalid)")
    check_new_documents(read.documents, set(), str(args.corpus))
    return read.documents


def _corpus_flags(p: argparse.ArgumentParser) -> None:
    """The flags that say how a corpus file's records are read."""
    p.add_argument("--text-field", help="JSONL text field (default: text, or contents)")
    p.add_argument("--id-field", help="JSONL id field (default: _id, else id)")
    p.add_argument(
        "--title-field", help="JSONL title field (default: title in BEIR's shape, else none)"
    )
    p.add_argument(
        "--skip-invalid",
        action="store_true",
        help="skip (and count) records without text, and lines that are not JSON objects, "
        "instead of refusing the file",
    )


def _from_tune(args: argparse.Namespace) -> None:
    """``--from-tune RUN``: the run's pick, encoder and task, where the flags name none."""
    from embedding_ttc.encoders.catalog import DEFAULT_ENCODER
    from embedding_ttc.tune.deploy import deployment

    if args.from_tune is None:
        args.encoder = args.encoder or DEFAULT_ENCODER
        return
    picked = deployment(args.from_tune)
    if args.encoder not in (None, picked.encoder):
        raise EmbeddingTTCError(
            f"index build: {args.from_tune} picked over {picked.encoder}, not {args.encoder}"
        )
    args.encoder = picked.encoder
    args.program, args.program_file = picked.program, picked.program_file
    if args.task is None and args.corpus is None:
        if picked.task.kind == "name":
            args.task = picked.task.name
        else:
            folder = Path(picked.task.path or "")
            args.corpus = folder / "corpus.jsonl"
            args.reference_queries = args.reference_queries or folder / "queries.jsonl"
    _say(
        f"{args.from_tune} picked {args.program or args.program_file} over {args.encoder}, "
        f"chosen at {picked.shortlist} candidates: serve it with --shortlist {picked.shortlist}"
    )


def cmd_index_build(args: argparse.Namespace) -> int:
    """Build an index of a task's corpus or a corpus file for one program and encoder."""
    from embedding_ttc.deploy.corpus import Document, read_queries, sample_texts
    from embedding_ttc.deploy.index import Index
    from embedding_ttc.tasks.catalog import load_task

    _from_tune(args)
    if args.task is None and args.corpus is None:
        raise EmbeddingTTCError("index build: give --task or --corpus (or --from-tune RUN)")
    program = _program(args)  # a bad program or program file fails before any loading
    _check_executor(args)
    set_threads(args.threads)
    size = args.reference_size
    queries: list[str] = []
    origin = ""
    if args.task:
        task = load_task(args.task, args.data_dir)
        docs = [
            Document(i, t, b)
            for i, t, b in zip(task.doc_ids, task.doc_titles, task.doc_bodies, strict=True)
        ]
        source = f"task:{task.name}"
        queries = sample_texts(task.query_texts, size, args.seed)
        origin = f"{len(queries)} of the {task.n_queries} queries of {task.name} (seed {args.seed})"
    else:
        docs = _read_corpus_args(args)
        source = f"corpus:{args.corpus}"
    if args.reference_queries:
        queries = sample_texts(read_queries(args.reference_queries), size, args.seed)
        origin = f"{len(queries)} queries of {args.reference_queries} (seed {args.seed})"
    with _build_encoder(args) as encoder, stage_progress(not args.no_progress) as progress:
        index = Index.build(
            args.out,
            docs,
            encoder=encoder,
            program=program,
            reference_queries=queries,
            reference_source=origin,
            source=source,
            replace=args.force,
            progress=progress,
        )
    m = index.manifest
    ref = f"; reference queries: {m.reference.source}" if m.reference else ""
    _say(
        f"built {args.out}: {m.counts.documents} documents, {m.counts.store_rows} index-time "
        f"embeddings, program {m.program.name}, encoder {m.encoder.name}{ref}"
    )
    if m.program.discovered is not None:
        recipe = index.recipe
        artifacts = ", ".join(a.describe() for a in recipe.artifacts) or "none"
        _say(
            f"derived recipe: index-time artifacts {artifacts}; lexical "
            f"{'yes' if recipe.lexical else 'no'}; encodes per query {recipe.encodes_per_query()} "
            f"(the query's own included, as `programs` counts); batch {recipe.batch} "
            f"({m.program.discovered.batch.why}); served in the sandbox"
        )
    return 0


def cmd_index_add(args: argparse.Namespace) -> int:
    """Append a corpus file's documents to an index."""
    from embedding_ttc.cli.common import build_encoder
    from embedding_ttc.deploy.index import Index

    set_threads(args.threads)
    index = Index.load(args.dir)
    docs = _read_corpus_args(args)
    encoder = build_encoder(
        index.manifest.encoder.name, args.cache_dir, args.no_cache, device=args.device
    )
    with stage_progress(not args.no_progress) as progress:
        new = index.add(docs, encoder=encoder, progress=progress)
    _say(f"added {len(docs)} documents to {args.dir}: {new.manifest.counts.documents} in all")
    return 0


def _serve_workers(args: argparse.Namespace, index: Any, sock: Any) -> int:
    """``serve --workers N``: N processes on ``sock``, each loading the index and its encoder."""
    from embedding_ttc.deploy.workers import ServeSettings, serve_workers
    from embedding_ttc.encoders.catalog import get_spec

    get_spec(index.manifest.encoder.name.partition("@")[0])  # unknown here: fails before workers
    if args.preload:
        from embedding_ttc.deploy.preload import preload

        read = preload(index.directory, index.manifest)
        _say(f"preloaded {read / 2**20:,.0f} MB of {args.dir} into the page cache")
    settings = ServeSettings(
        directory=args.dir.resolve(),
        first_stage=args.first_stage,
        shortlist=args.shortlist,
        cache_dir=args.cache_dir.resolve() if args.cache_dir else None,
        use_cache=not args.no_cache,
        device=args.device,
        threads=args.threads,
        retain_memory_mb=args.retain_memory_mb,
        watch=not args.no_watch,
    )
    _say(f"serving {index!r} on http://{args.host}:{args.port} with {args.workers} workers")
    serve_workers(settings, workers=args.workers, sock=sock, log_level=args.log_level)
    _say("stopped")
    return 0


def cmd_index_compact(args: argparse.Namespace) -> int:
    """Merge an index's segments into one (corpus-wide BM25 statistics)."""
    from embedding_ttc.deploy.index import Index

    index = Index.load(args.dir)
    before = len(index.segments)
    with stage_progress(not args.no_progress) as progress:
        new = index.compact(progress=progress)
    _say(
        f"compacted {args.dir}: {before} segment(s) into {len(new.segments)}, "
        f"{new.manifest.counts.documents} documents"
    )
    return 0


def cmd_index_ann(args: argparse.Namespace) -> int:
    """Rewrite an index's ANN indexes under the current policy (nothing encoded)."""
    from embedding_ttc.deploy.ann import AnnPolicy
    from embedding_ttc.deploy.index import Index

    if not 0.0 < args.target_recall <= 1.0:
        raise EmbeddingTTCError(f"--target-recall must be in (0, 1], got {args.target_recall}")
    if args.exact_below < 1:
        raise EmbeddingTTCError(f"--exact-below must be at least 1, got {args.exact_below}")
    policy = AnnPolicy(
        exact_below=args.exact_below, codes=args.codes, target_recall=args.target_recall
    )
    with stage_progress(not args.no_progress) as progress:
        new = Index.load(args.dir).reindex_ann(progress=progress, ann=policy)
    for segment in new.manifest.segments:
        ann = segment.ann
        what = (
            "searched exactly"
            if ann is None
            else f"{ann.kind}, nlist {ann.nlist}, nprobe {ann.nprobe}, recall@100 {ann.recall:.3f}"
            f" on {ann.calibration}, {ann.rescore} re-scored per result"
        )
        _say(f"segment {segment.name} ({segment.documents} documents): {what}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve an index over HTTP until SIGINT or SIGTERM.

    The port is bound first (a busy port ends the command before anything loads), the index
    is opened and checked, and the server answers ``/health`` at once while the encoder loads
    and warms up in a thread (:mod:`embedding_ttc.deploy.startup`); ``/ready`` says when.
    """
    from embedding_ttc.deploy.allocator import MAX_RETAIN_MB, retain_freed_memory
    from embedding_ttc.deploy.service import create_app, listen, require_serve_extra, serve

    require_serve_extra()  # before loading a model
    from embedding_ttc.cli.common import build_encoder
    from embedding_ttc.deploy.index import Index
    from embedding_ttc.deploy.reranker import Reranker
    from embedding_ttc.deploy.startup import Startup, StartupPlan

    if args.workers < 1:
        raise EmbeddingTTCError(f"--workers must be at least 1, got {args.workers}")
    if args.shortlist < 1:
        raise EmbeddingTTCError(f"--shortlist must be at least 1, got {args.shortlist}")
    if not 0 <= args.retain_memory_mb <= MAX_RETAIN_MB:
        raise EmbeddingTTCError(
            f"--retain-memory-mb must be 0 to {MAX_RETAIN_MB}, got {args.retain_memory_mb}"
        )
    set_threads(args.threads)
    sock = listen(args.host, args.port)  # before the index or the model: a busy port fails now
    try:
        index = Index.load(args.dir, verify=args.verify)
        if args.workers > 1:
            return _serve_workers(args, index, sock)
        retain_freed_memory(args.retain_memory_mb)

        def load() -> Reranker:
            encoder = build_encoder(
                index.manifest.encoder.name, args.cache_dir, args.no_cache, device=args.device
            )
            return Reranker(index, encoder)

        def preload() -> int:
            from embedding_ttc.deploy.preload import preload as read_all

            return read_all(index.directory, index.manifest)

        plan = StartupPlan(
            load=load,
            first_stage=args.first_stage,
            shortlist=args.shortlist,
            watch=not args.no_watch,
            preload=preload if args.preload else None,
        )
        startup = Startup(index, plan, report=_say)
        app = create_app(startup, first_stage=args.first_stage, shortlist=args.shortlist)
        _say(
            f"serving {index!r} on http://{args.host}:{args.port} (/health answers now; "
            "/ready once the encoder is loaded and warmed up)"
        )
        serve(app, log_level=args.log_level, sock=sock, startup=startup)
    finally:
        sock.close()
    _say("stopped")
    return 0


def add_deploy_commands(sub: Any) -> None:
    """Add ``index build``, ``add``, ``compact`` and ``ann``, and ``serve``, to the parser."""
    from embedding_ttc.deploy.allocator import DEFAULT_RETAIN_MB
    from embedding_ttc.deploy.ann import KINDS, AnnPolicy
    from embedding_ttc.deploy.build import DEFAULT_REFERENCE_SIZE
    from embedding_ttc.deploy.reranker import DEFAULT_SHORTLIST
    from embedding_ttc.encoders.catalog import DEFAULT_ENCODER
    from embedding_ttc.encoders.sharded import DEFAULT_SHARD_SIZE

    def encoder_options(p: argparse.ArgumentParser, *, serving: bool = False) -> None:
        p.add_argument("--cache-dir", type=Path, help="embedding cache (default: user cache)")
        p.add_argument("--no-cache", action="store_true", help="do not use the embedding cache")
        if serving:
            p.add_argument(
                "--threads",
                type=int,
                default=SERVE_THREADS,
                help=f"torch intra-op threads per worker (default {SERVE_THREADS}: a request "
                "is one query, and more threads per worker thrash on busy cores; raise it "
                "for a lone worker on idle cores, or add --workers)",
            )
        else:
            p.add_argument("--threads", type=int, help="torch intra-op threads (default: torch's)")
        add_device(p)

    ix = sub.add_parser("index", help="build or extend a deployed index")
    ixsub = ix.add_subparsers(dest="index_command", required=True)
    bu = ixsub.add_parser("build", help="build an index for one program and encoder")
    bu.add_argument("--encoder", help=f"default {DEFAULT_ENCODER} (--from-tune: the run's)")
    which = bu.add_mutually_exclusive_group()
    which.add_argument("--program", help="library program name (default P0)")
    which.add_argument(
        "--program-file",
        type=Path,
        metavar="PATH",
        help="a program file found by the search (def program(Q, D, S, ctx)): checked, its "
        "recipe derived at build time, its source stored in the index, served in the sandbox",
    )
    which.add_argument(
        "--from-tune",
        type=Path,
        metavar="RUN",
        help="the pick of a tune run (its pick.json), over the run's encoder and, unless "
        "--task or --corpus says otherwise, the run's task",
    )
    src = bu.add_mutually_exclusive_group()
    src.add_argument("--task", help="index this task's corpus (its queries: reference sample)")
    src.add_argument(
        "--corpus",
        type=Path,
        help="JSONL (BEIR: _id, title, text; Pyserini: id, contents) or TSV (id, [title,] text)",
    )
    _corpus_flags(bu)
    bu.add_argument("--out", type=Path, required=True, help="the index directory")
    bu.add_argument(
        "--reference-queries",
        type=Path,
        help="queries (JSONL 'text' or one a line) for the reference sample of "
        "batch-statistics programs (default: the task's, else pseudo-queries from the corpus)",
    )
    bu.add_argument(
        "--reference-size",
        type=int,
        default=DEFAULT_REFERENCE_SIZE,
        help="reference queries stored for programs whose statistics span a batch of queries "
        f"(default {DEFAULT_REFERENCE_SIZE})",
    )
    bu.add_argument("--seed", type=int, default=0, help="seed of the reference sample")
    bu.add_argument("--force", action="store_true", help="replace an existing index at --out")
    add_data_dir(bu)
    add_tokenizer(bu)
    bu.add_argument("--no-progress", action="store_true", help="no progress bars")
    encoder_options(bu)
    bu.add_argument(
        "--executor",
        default="inprocess",
        help="where the corpus is encoded: inprocess (default) or ray (shards as Ray tasks, "
        "the ray extra; the index is the same file for file)",
    )
    bu.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="the Ray cluster of --executor ray (default: RAY_ADDRESS, else a local Ray)",
    )
    bu.add_argument(
        "--shard-size",
        type=int,
        default=DEFAULT_SHARD_SIZE,
        metavar="N",
        help=f"texts per Ray task of --executor ray (default {DEFAULT_SHARD_SIZE})",
    )
    bu.set_defaults(func=cmd_index_build)

    ad = ixsub.add_parser("add", help="append documents to an index (no rebuild)")
    ad.add_argument("dir", type=Path, help="the index directory")
    ad.add_argument("--corpus", type=Path, required=True, help="the new documents")
    _corpus_flags(ad)
    ad.add_argument("--no-progress", action="store_true", help="no progress bars")
    encoder_options(ad)
    ad.set_defaults(func=cmd_index_add)

    co = ixsub.add_parser(
        "compact", help="merge an index's segments into one (exact corpus-wide BM25 statistics)"
    )
    co.add_argument("dir", type=Path, help="the index directory")
    co.add_argument("--no-progress", action="store_true", help="no progress bars")
    co.set_defaults(func=cmd_index_compact)

    an = ixsub.add_parser(
        "ann",
        help="rewrite every segment's ANN index under the current policy (nothing re-encoded)",
    )
    an.add_argument("dir", type=Path, help="the index directory")
    an.add_argument(
        "--codes",
        choices=tuple(KINDS),
        default=AnnPolicy.codes,
        help="how the inverted lists hold the vectors: pq4fs, 4-bit fast-scan product codes; "
        f"sq8, 8-bit scalar codes; flat, float32 (default {AnnPolicy.codes})",
    )
    an.add_argument(
        "--target-recall",
        type=float,
        default=AnnPolicy.target_recall,
        metavar="R",
        help="recall@100 the chosen nprobe must reach on the calibration queries "
        f"(default {AnnPolicy.target_recall})",
    )
    an.add_argument(
        "--exact-below",
        type=int,
        default=AnnPolicy.exact_below,
        metavar="N",
        help=f"segments of fewer documents are searched exactly, with no ANN index "
        f"(default {AnnPolicy.exact_below:,})",
    )
    an.add_argument("--no-progress", action="store_true", help="no progress bars")
    an.set_defaults(func=cmd_index_ann)

    se = sub.add_parser("serve", help="serve an index over HTTP (needs the serve extra)")
    se.add_argument("dir", type=Path, help="the index directory")
    add_tokenizer(se)
    se.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    se.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    se.add_argument(
        "--first-stage",
        choices=("dense", "exact", "bm25"),
        default="dense",
        help="the built-in first stage of /search: dense cosine (default; ANN on segments "
        "of 50,000 documents and more), exact (dense over every document, no ANN) or BM25",
    )
    se.add_argument(
        "--shortlist",
        type=int,
        default=DEFAULT_SHORTLIST,
        metavar="N",
        help=f"candidates /search hands the program (default {DEFAULT_SHORTLIST})",
    )
    se.add_argument("--verify", action="store_true", help="check every file's SHA-256 first")
    se.add_argument(
        "--no-watch",
        action="store_true",
        help="do not watch the index for new versions (index add, compact, ann); "
        "POST /admin/reload still swaps one in",
    )
    se.add_argument(
        "--preload",
        action="store_true",
        help="read every file of the index once before serving, so that the first queries "
        "do not wait for disk (the page cache, shared by the workers; not pinned)",
    )
    se.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="server processes sharing the port and the memory-mapped index, each with its "
        "own encoder (default 1: one process)",
    )
    se.add_argument(
        "--retain-memory-mb",
        type=int,
        default=DEFAULT_RETAIN_MB,
        metavar="MB",
        help="freed memory each process keeps for the next request instead of returning it to "
        f"the kernel (glibc; default {DEFAULT_RETAIN_MB}: a chunked program's arrays are not "
        "paged in afresh every request; 0: the C library's default)",
    )
    se.add_argument("--log-level", default="info", help="uvicorn log level (default info)")
    encoder_options(se, serving=True)
    se.set_defaults(func=cmd_serve)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the deploy commands on their own (``python -m embedding_ttc.cli.deploy``)."""
    parser = argparse.ArgumentParser(prog="embedding-ttc")
    add_deploy_commands(parser.add_subparsers(dest="command", required=True))
    from embedding_ttc.cli.common import run_command

    return run_command(parser.parse_args(argv), "no partial index was left")


if __name__ == "__main__":
    sys.exit(main())
