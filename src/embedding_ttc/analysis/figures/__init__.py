"""The transfer study's figures: matplotlib rendering of figure data records, nothing else.

One module per family of figures, as in :mod:`embedding_ttc.analysis.figure_data`
(:mod:`.search`, :mod:`.transfer`, :mod:`.train_vs_test`, :mod:`.prf`), each drawing one data
record on a fresh :class:`matplotlib.figure.Figure` (the Agg canvas, no pyplot state) and
writing its caption, with the shared colours, canvas and label placement in :mod:`.style`.
:mod:`.registry` names every figure (:data:`~.registry.FIGURES`, keyed by
:data:`~embedding_ttc.analysis.figure_data.build.FIGURE_NAMES`), draws it by name and saves
``<name>.png`` and ``<name>.svg``. matplotlib is the ``report`` extra and is imported only when
a figure is drawn.
"""
