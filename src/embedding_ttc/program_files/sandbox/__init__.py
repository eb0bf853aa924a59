"""The sandbox: a program file run in a separate, contained process.

Parent side: ``program`` (the sandboxed program, and reading program files), ``limits`` (what
a call may use), ``session`` (one call: spawn, serve, reap), ``verdict`` (what the outcome
means) and ``warm`` (a long-lived child whose calls a served program reuses). Child side:
``child`` (the process that runs the program, ``python -m
embedding_ttc.program_files.sandbox.child``), ``warm_child`` (the warm worker's child),
``containment`` (network, rlimits, audit hook) and ``preload`` (the modules a program may
reach). Both speak ``wire``.
"""
