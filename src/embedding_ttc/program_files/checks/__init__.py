"""Static checks on a program file's source (constraints 1, 2 and 4), before it runs.

``source`` runs them all (:func:`~embedding_ttc.program_files.checks.source.check_source`);
``rules`` holds their tables and the rejection they raise; ``imports``, ``module_level`` and
``names`` hold the rules on imports, on module level and on names, attributes and literals.
"""
