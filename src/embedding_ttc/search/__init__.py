"""Agentic program search (paper §3): propose, check, evaluate, record, one generation at a time.

The loop and its collaborators:

* :mod:`~embedding_ttc.search.loop`: Algorithm 1 over the collaborators it is given
  (:mod:`~embedding_ttc.search.seams`: checker, sandbox factory, evaluator);
* :mod:`~embedding_ttc.search.interface`: the program-file contract and the six constraints;
* :mod:`~embedding_ttc.search.evaluator`: a candidate scored on every discovery task, one
  task's run in :mod:`~embedding_ttc.search.task_runs`, in process or on Ray
  (:mod:`~embedding_ttc.search.executors`);
* :mod:`~embedding_ttc.search.records`, :mod:`~embedding_ttc.search.ledger`,
  :mod:`~embedding_ttc.search.frontier`: the ledger's lines, the append-only ledger, and the
  frontier under an admission rule;
* :mod:`~embedding_ttc.search.split`: each task's queries cut into search and validation parts;
* :mod:`~embedding_ttc.search.run_config`: ``RUN_DIR/search.json``, with the proposer's spec;
* :mod:`~embedding_ttc.search.novelty`, :mod:`~embedding_ttc.search.lessons`,
  :mod:`~embedding_ttc.search.parse`: structural similarity, each record's lesson, and a
  model's reply read;
* ``checks/``: the static checks of a source; ``sandbox/``: the contained child process that
  runs it, with its wire format and limits;
* :mod:`~embedding_ttc.search.external`: programs written elsewhere (a peer) judged by the loop.

Who writes the next program, a strategy over a backend:

* :mod:`~embedding_ttc.search.proposer`: the proposer seam (``Proposer``, ``ProposerError``);
* ``backends/``: the chat backends (openai, anthropic, llama-cpp) and their registry;
* ``strategies/``: how a program is written (structural, draft, edit, guided, external), their
  registry, and the command line's options resolved into a spec;
* :mod:`~embedding_ttc.search.conversation`: a generation's calls, repair turns, seeds and
  accounting, shared by the LLM strategies;
* :mod:`~embedding_ttc.search.population`: the choice of the parent a generation starts from;
* ``structural/``: genomes of primitives, mutated and rendered as programs (no model);
* ``drafting/``: a whole program per generation (the single draft, or drafts with repairs);
* ``editing/``: search/replace edits of one parent (its prompt, blocks, seeds, ideas);
* ``guided/``: the model chooses a parent genome's next edit under a JSON schema;
* ``precheck/``: the cheap check of a model's program, its repairs and the repair hints;
* ``prompts/``: the full prompt, the compact one for small models, and their parts.
"""
