"""Resumable HTTP downloads into a ``.part`` file, and the checksums of a downloaded file.

:func:`download` completes a ``.part`` file from a URL. When the file already holds bytes (an
earlier download was interrupted) it asks for the rest with an HTTP ``Range`` request (RFC
9110 §14); a server that ignores ``Range`` answers ``200`` with the whole body, and the file is
then written again from its first byte. A connection that drops mid-way leaves the bytes
received so far in place, so running the same download again continues from there. The file
is never checked here: the caller compares its checksum (:func:`digests`) before using it.
"""

from __future__ import annotations

import hashlib
import http.client
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from embedding_ttc import __version__
from embedding_ttc.durable import fsync_file
from embedding_ttc.errors import DatasetError

__all__ = ["Digests", "DownloadError", "UnreachableError", "digests", "download"]

Progress = Callable[[str, int, int], None]
_BLOCK = 1 << 20
_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")
_UNSATISFIED_RANGE = re.compile(r"bytes\s+\*/(\d+)")


class DownloadError(DatasetError):
    """A download failed after it started (HTTP error, dropped connection, short body)."""


class UnreachableError(DownloadError):
    """The server could not be reached at all (offline, DNS failure, refused connection)."""


@dataclass(frozen=True)
class Digests:
    """A file's size in bytes, MD5 and SHA-256 (hex)."""

    bytes: int
    md5: str
    sha256: str


def digests(path: Path) -> Digests:
    """Size, MD5 and SHA-256 of ``path`` in one read (MD5 because BEIR publishes MD5s)."""
    md5 = hashlib.md5(usedforsecurity=False)
    sha = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while block := fh.read(_BLOCK):
            md5.update(block)
            sha.update(block)
            size += len(block)
    return Digests(bytes=size, md5=md5.hexdigest(), sha256=sha.hexdigest())


def _content_range(value: str | None) -> tuple[int, int | None] | None:
    """``(first byte, total or None)`` of a ``Content-Range`` header, ``None`` if unparsable."""
    match = _CONTENT_RANGE.fullmatch((value or "").strip())
    if not match:
        return None
    total = match.group(3)
    return int(match.group(1)), None if total == "*" else int(total)


def _open(url: str, offset: int, timeout: float) -> tuple[Any, int, int | None]:
    """Open ``url`` from byte ``offset``; return the response, where it starts, the total size.

    The start is ``offset`` when the server honoured the ``Range`` request, else 0. The
    response is ``None`` when the server answers 416 (no bytes past ``offset``): the start is
    then ``offset`` and the total the size the server gives, if any.
    """
    headers = {"User-Agent": f"embedding-ttc/{__version__}"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    try:
        request = urllib.request.Request(url, headers=headers)
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset:  # nothing left to send: the part may be whole already
            unsatisfied = _UNSATISFIED_RANGE.fullmatch(exc.headers.get("Content-Range", ""))
            exc.close()
            return None, offset, int(unsatisfied.group(1)) if unsatisfied else None
        raise DownloadError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise UnreachableError(f"cannot reach {url}: {reason}") from exc
    length = response.headers.get("Content-Length")
    if offset and response.status == 206:
        parsed = _content_range(response.headers.get("Content-Range"))
        if parsed and parsed[0] == offset:
            return response, offset, parsed[1]
        response.close()  # a range other than the one asked for: start over without Range
        return _open(url, 0, timeout)
    return response, 0, int(length) if length is not None else None


def download(
    url: str,
    part: Path,
    *,
    size_hint: int | None = None,
    progress: Progress | None = None,
    stage: str = "downloading",
    timeout: float = 60.0,
) -> int:
    """Complete ``part`` with the body of ``url``, continuing from the bytes it already holds.

    Args:
        url: an ``http(s)://`` (or ``file://``) URL.
        part: the file being downloaded; created if absent, continued if present.
        size_hint: the expected size, for progress when the server sends no length.
        progress: ``(stage, bytes so far, total or 0)`` callback.
        stage: the stage name passed to ``progress``.
        timeout: seconds without data before the connection is given up.

    Returns:
        The size of the complete file.

    Raises:
        UnreachableError: the server cannot be reached.
        DownloadError: an HTTP error, or the connection dropped before the whole body came
            (the bytes received stay in ``part``; calling again resumes).

    """
    part.parent.mkdir(parents=True, exist_ok=True)
    have = part.stat().st_size if part.exists() else 0
    response, start, total = _open(url, have, timeout)
    if response is None:  # 416: the server has no bytes past ``have``
        if total is not None and total != have:
            part.unlink()  # longer than the file on the server: not a prefix of it
            return download(
                url, part, size_hint=size_hint, progress=progress, stage=stage, timeout=timeout
            )
        return have
    expected = total or size_hint or 0
    done = start
    with response, open(part, "ab" if start else "wb") as out:
        try:
            while block := response.read(_BLOCK):
                out.write(block)
                done += len(block)
                if progress is not None:
                    progress(stage, done, expected)
        except (OSError, http.client.HTTPException) as exc:  # reset, timeout: keep what came
            out.flush()
            raise DownloadError(
                f"download of {url} interrupted after {done} bytes ({exc}); "
                "run the same command again to resume"
            ) from exc
        finally:
            out.flush()
    fsync_file(part)
    if total is not None and done != total:
        raise DownloadError(
            f"download of {url} stopped after {done} of {total} bytes; "
            "run the same command again to resume"
        )
    return done
