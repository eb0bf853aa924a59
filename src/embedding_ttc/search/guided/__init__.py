"""The guided structural proposer: a language model chooses the structural proposer's next edit.

:mod:`.prompt` renders what the model reads (the parent genome, its results and lessons, the
parts it may add), :mod:`.proposer` asks for one edit under a JSON schema
(:mod:`embedding_ttc.search.structural.edits`) and renders the program.
"""
