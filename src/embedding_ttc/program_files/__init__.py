"""Program files: a program ``P(Q, D, S, ctx)`` written as Python source, checked and contained.

What ``evaluate --program-file``, ``transfer``, ``index build --program-file``, ``serve`` and
the search use to run a program that is not in the library:

* :mod:`~embedding_ttc.program_files.contract`: what a program file is (the function it
  defines, the modules it may import, the six constraints, the interface text of prompts);
* :mod:`~embedding_ttc.program_files.parse`: the program source and its ``Novelty`` /
  ``Hypothesis`` / ``Parent`` header, read out of a file or a model's reply;
* :mod:`~embedding_ttc.program_files.checks`: the static checks of constraints 1, 2 and 4,
  before anything runs;
* :mod:`~embedding_ttc.program_files.sandbox`: the separate, contained process every call runs
  in (limits, containment, the wire protocol, what an outcome means).

What became of a run (its ``Status``, a failure's ``CandidateError``) is
:mod:`embedding_ttc.programs.outcome`.
"""
