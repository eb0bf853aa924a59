"""Agentic program search (paper §3): propose, check, evaluate, record, one generation at a time.

The loop and its collaborators:

* :mod:`~embedding_ttc.search.loop`: Algorithm 1 over the collaborators it is given
  (:mod:`~embedding_ttc.search.seams`: checker, sandbox factory, evaluator);
* :mod:`~embedding_ttc.search.state`: what a proposer reads and writes (the search state, a
  proposal, what its calls cost);
* :mod:`~embedding_ttc.search.evaluator`: a candidate scored on every discovery task, one
  task's run in :mod:`~embedding_ttc.search.task_runs`, in process or on Ray
  (:mod:`~embedding_ttc.search.executors`);
* :mod:`~embedding_ttc.search.novelty`, :mod:`~embedding_ttc.search.lessons`: structural
  similarity, and each record's lesson;
* :mod:`~embedding_ttc.search.external`: programs written elsewhere (a peer) judged by the loop.

What the search shares with the rest of the package lives below it: the program-file
contract, the static checks, the sandbox and the reply parser in
:mod:`embedding_ttc.program_files`; the run on disk (ledger records, the ledger, the frontier,
the query split, ``search.json`` with the proposer's spec) in :mod:`embedding_ttc.runs`.

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
