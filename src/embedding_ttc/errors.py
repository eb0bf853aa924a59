"""Exceptions raised for user-facing problems (bad input, missing model, unknown name)."""

from __future__ import annotations

import json


class EmbeddingTTCError(Exception):
    """Base class: a problem the user can fix, with a message that names it."""


class UnknownNameError(EmbeddingTTCError, KeyError):
    """A registry lookup failed; the message lists the closest registered names."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else ""


class DatasetError(EmbeddingTTCError):
    """A task folder is missing, malformed or inconsistent (message names file and line)."""


class EncoderUnavailableError(EmbeddingTTCError):
    """An encoder cannot be loaded here (missing package, offline, unknown model)."""


def install_hint(extra: str) -> str:
    """The command that installs the optional dependencies of ``extra``.

    embedding-ttc is installed from a clone (``scripts/setup.sh`` makes ``.venv``), so the
    command is pip's editable install run in the clone; every install hint is this one.
    """
    return f"pip install -e '.[{extra}]' (in the embedding-ttc clone)"


class MissingExtraError(EmbeddingTTCError):
    """An optional dependency is not installed; the message carries the install hint."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        super().__init__(
            f"{purpose} needs the Python package '{package}', which is not installed. "
            f"Install it with: {install_hint(extra)}"
        )
        self.package = package
        self.extra = extra


def json_error_detail(exc: json.JSONDecodeError, *, line: bool = True) -> str:
    """The whole message of a JSON parse error, with its position.

    ``exc.msg`` alone stops mid-sentence for several errors ("Invalid control character at",
    "Unterminated string starting at"): the position completes it. ``line=False`` gives the
    column only, for a caller that names the file's line itself (one JSONL line parsed alone).
    """
    where = f"line {exc.lineno}, column {exc.colno}" if line else f"column {exc.colno}"
    return f"{exc.msg.removesuffix(' at')} at {where}"
