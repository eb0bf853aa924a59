"""The vocabulary of the text analyses: token strings and their ids, append-only.

An id never changes meaning. An extension (``base=``) numbers new tokens after its base's
without copying it, so that documents analysed later (a deployed index's live documents, the
documents an addition brings) share the ids of those analysed before.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray


class Vocabulary:
    """Token strings and their ids, append-only; optionally extending a base vocabulary.

    An extension (``base=``) gives every token of its base the base's id and numbers new
    tokens after them, without copying the base: documents the base never saw (a deployed
    index's live documents, the documents an addition brings) are analysed into it.
    """

    def __init__(self, tokens: Iterable[str] = (), base: Vocabulary | None = None) -> None:
        self._base = base
        self._offset = len(base) if base is not None else 0
        self._tokens: list[str] = []
        self._ids: dict[str, int] = {}
        if base is None:
            self._tokens = list(tokens)
            self._ids = {token: i for i, token in enumerate(self._tokens)}
            if len(self._ids) != len(self._tokens):
                raise ValueError("a vocabulary holds each token once")
        else:
            self.add(list(tokens))

    def __len__(self) -> int:
        return self._offset + len(self._tokens)

    def id(self, token: str) -> int | None:
        """The id of ``token``, or ``None`` if it has none."""
        if self._base is not None:
            found = self._base.id(token)
            if found is not None and found < self._offset:
                return found
        return self._ids.get(token)

    def token(self, token_id: int) -> str:
        """The token of ``token_id``."""
        if token_id < self._offset:
            assert self._base is not None
            return self._base.token(token_id)
        return self._tokens[token_id - self._offset]

    @property
    def tokens(self) -> list[str]:
        """Every token, in id order."""
        head = self._base.tokens[: self._offset] if self._base is not None else []
        return [*head, *self._tokens]

    def add(self, tokens: Sequence[str]) -> NDArray[np.int64]:
        """The id of each token, new tokens appended."""
        ids = self._ids
        if self._base is None:  # one dict: the lookups run in C
            for token in [t for t in dict.fromkeys(tokens) if t not in ids]:
                self._append(token)
            return np.fromiter(map(ids.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        out = np.empty(len(tokens), dtype=np.int64)
        for i, token in enumerate(tokens):
            found = self.id(token)
            out[i] = self._append(token) if found is None else found
        return out

    def _append(self, token: str) -> int:
        new = len(self)
        if new >= 1 << 31:
            raise ValueError("a vocabulary holds fewer than 2**31 tokens")
        self._ids[token] = new
        self._tokens.append(token)
        return new

    def lookup(self, tokens: Sequence[str]) -> NDArray[np.int64]:
        """The id of each token, ``-1`` for a token it does not hold."""
        ids = [self.id(token) for token in tokens]
        return np.array([-1 if i is None else i for i in ids], dtype=np.int64)
