"""Evaluation: nDCG@10 with pytrec_eval's rules, the evaluate() path, result records.

* :mod:`~embedding_ttc.evaluation.evaluate`: ``evaluate(program, task, encoder)``, the one
  path every program goes through, in whole-corpus or shortlist batches
  (:mod:`~embedding_ttc.evaluation.batches`), or over a user's own first stage
  (:mod:`~embedding_ttc.evaluation.first_stage_run`);
* :mod:`~embedding_ttc.evaluation.guarded`: programs that may fail, one at a time, and
  :mod:`~embedding_ttc.programs.outcome`: what became of a run (status and reason);
* :mod:`~embedding_ttc.evaluation.metrics` (nDCG@10 as pytrec_eval computes it),
  :mod:`~embedding_ttc.evaluation.ranking` (scores to rankings) and
  :mod:`~embedding_ttc.evaluation.measures` (the measures of ``--metrics``);
* :mod:`~embedding_ttc.evaluation.comparison`: a program against the baseline (Δ, W/T/L);
* :mod:`~embedding_ttc.evaluation.records`, :mod:`~embedding_ttc.evaluation.output`,
  :mod:`~embedding_ttc.evaluation.trec` and :mod:`~embedding_ttc.evaluation.table`: the result
  records, the run directory, TREC run files and the discovery table;
* :mod:`~embedding_ttc.evaluation.mteb_model`: a program as an mteb search model.
"""
