"""The edit proposer: a language model as a mutation operator on one parent program.

The parent comes from :mod:`embedding_ttc.search.population`, :mod:`.prompt` renders what
the model reads,
:mod:`.blocks` applies the search/replace edit it returns, and :mod:`.proposer` runs one
generation (with a repair turn). The lessons it reads are :mod:`embedding_ttc.search.lessons`.
"""
