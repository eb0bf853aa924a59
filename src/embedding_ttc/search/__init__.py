"""Agentic program search (paper §3): propose, check, evaluate, record, one generation at a time.

The loop and its collaborators:

* :mod:`~embedding_ttc.search.loop`: Algorithm 1 over the collaborators it is given
  (:mod:`~embedding_ttc.search.seams`: checker, sandbox factory, evaluator);
* :mod:`~embedding_ttc.search.state`: what a proposer reads and writes (the search state, a
  proposal, what its calls cost);
* :mod:`~embedding_ttc.search.evaluator`: a candidate scored on every discovery task, one
  task's run in :mod:`~embedding_ttc.search.task_runs`, in process or on Ray (over
  :mod:`~embedding_ttc.executors`);
* :mod:`~embedding_ttc.search.novelty`, :mod:`~embedding_ttc.search.lessons`: structural
  similarity, and each record's lesson;
* :mod:`~embedding_ttc.search.external`: programs written elsewhere (a peer) judged by the loop.

What the search shares with the rest of the package lives below it: the program-file
contract, the static checks, the sandbox and the reply parser in
:mod:`embedding_ttc.program_files`; the run on disk (ledger records, the ledger, the frontier,
the query split, ``search.json`` with the proposer's spec) in :mod:`embedding_ttc.runs`.

Who writes the next program, a strategy over a backend:

* :mod:`~embedding_ttc.search.open`: a run opened from its typed config
  (:func:`~embedding_ttc.search.open.open_search`), and its sandbox limits
  (:mod:`~embedding_ttc.search.limits`);
* :mod:`~embedding_ttc.search.proposer`: the proposer seam (``Proposer``, ``ProposerError``);
* ``backends/``: the chat backends (openai, anthropic, llama-cpp) and their registry;
* ``strategies/``: how a program is written, one folder each (``structural``, ``draft``,
  ``edit``, ``guided``, ``external``: its options record, factory, prompt and command-line
  options) and their registry;
* :mod:`~embedding_ttc.search.conversation`: a generation's calls, repair turns, seeds and
  accounting, shared by the LLM strategies;
* :mod:`~embedding_ttc.search.population`: the choice of the parent a generation starts from;
* ``structural/``: genomes of primitives, mutated and rendered as programs (no model; the
  structural and guided strategies write with them);
* ``precheck/``: the cheap check of a model's program, its repairs and the repair hints;
* ``prompts/``: the full prompt, the compact one for small models, and their shared parts.
"""
