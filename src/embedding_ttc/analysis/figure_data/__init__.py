"""What each figure of the transfer study draws: pure computation, no plotting library.

Every builder turns records — search ledger lines, transfer cells and their
:class:`~embedding_ttc.analysis.transfer_report.TransferReport`, learned-head records — into a
frozen dataclass holding exactly the numbers one figure shows, or a
:class:`~.base.Skipped` that says why the figure cannot be drawn.
:mod:`embedding_ttc.analysis.figures` renders them. One module per family of figures, each
following the paper's figure named beside it:

* :mod:`.search` — ``pareto`` (Fig. 2): every evaluated program of a search as (cost ratio
  ``c``, mean discovery Δ), the Pareto set highlighted and the frontier curve drawn from P0 at
  (1, 0); ``trajectory`` (App. B): a 2-D layout of the programs' per-task Δ vectors (UMAP,
  seeded; PCA when there are too few programs, with the reason; :mod:`.layout`), coloured by
  generation and by cost, the Pareto programs joined in ascending cost;
* :mod:`.transfer` — ``heatmap`` (Fig. 3): per held-out encoder, programs × held-out tasks of
  Δ, the colour of each task column scaled by that column's largest |Δ|, significant cells
  marked; ``encoder_bars`` / ``encoder_bars_all`` (App. C, Fig. 5): per encoder, the median
  held-out Δ of one program (every program) with its win-rate;
* :mod:`.train_vs_test` — ``train_vs_test`` (App. C, Fig. 6): programs' held-out cost ratio
  against their pooled median held-out Δ with the learned head at c = 1; and the learned
  heads' in-domain Δ against their held-out Δ per encoder, beside the best program's held-out
  median;
* :mod:`.prf` — ``prf`` / ``prf_tasks`` (App. D, Fig. 7): best Rocchio configuration against
  SoftCentroid per encoder, on one task (ArguAna by default) and on every held-out task.

:mod:`.build` computes every figure's data for the report; :mod:`.base` holds what the
families share. Δ is always a cell's ΔnDCG@10 against its encoder's P0 (see
:mod:`~embedding_ttc.analysis.cells`); a win is Δ above the report's threshold, as in the
tables.
"""
