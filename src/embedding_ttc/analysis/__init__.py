"""Transfer analysis (paper §4, App. C-D): the cell matrix, paired bootstrap, tables and figures.

A transfer study runs programs, unchanged, on held-out tasks and encoder families, one cell
(encoder, task, program) at a time, and reports them against P0 and the baselines:

* running a study: :mod:`~embedding_ttc.analysis.transfer` (the run, in named steps) with its
  :mod:`~embedding_ttc.analysis.transfer_config`, :mod:`~embedding_ttc.analysis.transfer_events`,
  :mod:`~embedding_ttc.analysis.transfer_setup` (tasks and programs resolved up front) and
  :mod:`~embedding_ttc.analysis.transfer_heads`;
* the matrix: :mod:`~embedding_ttc.analysis.plan` (the cells asked for),
  :mod:`~embedding_ttc.analysis.groups` (one encoder and task's cells, computed together),
  :mod:`~embedding_ttc.analysis.matrix` (the missing cells computed and written as they come),
  run over :mod:`~embedding_ttc.executors` (in process or on Ray),
  :mod:`~embedding_ttc.analysis.cells` (one record per cell, and their store),
  :mod:`~embedding_ttc.analysis.staleness` (which stored cells to recompute),
  :mod:`~embedding_ttc.analysis.manifest` and :mod:`~embedding_ttc.analysis.run_log` (what each
  run wrote and asked);
* what runs in a cell besides the library: :mod:`~embedding_ttc.program_files.program_file`,
  :mod:`~embedding_ttc.analysis.discovered` (a search run's programs), and the learned-head
  baseline, :mod:`~embedding_ttc.analysis.heads` and :mod:`~embedding_ttc.analysis.head_store`;
* statistics and comparisons: :mod:`~embedding_ttc.analysis.stats` (paired bootstrap),
  :mod:`~embedding_ttc.analysis.comparisons` (oracle, PRF, fusion),
  :mod:`~embedding_ttc.analysis.side_by_side` (two runs of one matrix) and
  :mod:`~embedding_ttc.analysis.selection` (which selection signal predicts transfer, on
  discovery tasks alone);
* the report, computed apart from its rendering: :mod:`~embedding_ttc.analysis.inputs` (what
  a study left on disk), :mod:`~embedding_ttc.analysis.transfer_report` (computed once),
  :mod:`~embedding_ttc.analysis.tables` and :mod:`~embedding_ttc.evaluation.grid` (tables as
  Markdown, CSV, LaTeX), ``figure_data/`` (what each figure draws) and ``figures/``
  (matplotlib), :mod:`~embedding_ttc.analysis.report_page`,
  :mod:`~embedding_ttc.analysis.report_html` and :mod:`~embedding_ttc.analysis.report` (the
  HTML page).
"""
