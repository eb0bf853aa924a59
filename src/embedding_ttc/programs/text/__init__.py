"""The text machinery under the lexical primitives, one concept a module.

Program files import these names from :mod:`embedding_ttc.programs.primitives.lexical` and
:mod:`embedding_ttc.programs.primitives.text_analysis`, which re-export them: tokens
(:mod:`.tokens`), the term-document incidence and IDF (:mod:`.incidence`), the channels built on
it (:mod:`.term_channels`), BM25 (:mod:`.bm25`), and the per-document text analyses: the
vocabulary (:mod:`.vocabulary`), ragged arrays (:mod:`.ragged`), one document's analysis
(:mod:`.doc_analysis`), the analyses of many documents and their disk form
(:mod:`.analyses`), and where a program call finds its analyses (:mod:`.analysis_sources`).
"""
