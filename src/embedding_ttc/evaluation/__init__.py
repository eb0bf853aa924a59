"""Evaluation: nDCG@10 with pytrec_eval's rules, the evaluate() path, result records."""
