"""The edit proposer: a language model as a mutation operator on one parent program.

:mod:`.parents` chooses the parent, :mod:`.prompt` renders what the model reads,
:mod:`.blocks` applies the search/replace edit it returns, and :mod:`.proposer` runs one
generation (with a repair turn). The lessons it reads are :mod:`embedding_ttc.search.lessons`.
"""
