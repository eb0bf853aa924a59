"""Reading ``manifest.json``, checked, as a schema-3 :class:`Manifest`.

An index of another schema is refused with a message naming the file and the version, rather
than calling a new (or an old) field malformed: an index of schema 1 or 2, built before 0.1.0,
is rebuilt.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from embedding_ttc import __version__
from embedding_ttc.deploy.errors import DeployError, IndexCorruptError
from embedding_ttc.deploy.manifest import MANIFEST, Manifest

READABLE_SCHEMAS = (3,)
"""Manifest versions this embedding-ttc reads."""


def read_manifest(root: Path) -> Manifest:
    """The manifest of the index at ``root``, checked against this version's schema.

    Raises:
        DeployError: no index there (no folder, or no manifest: a build that did not finish),
            or an unsupported schema version.
        IndexCorruptError: the manifest is not JSON or not a valid manifest.

    """
    path = root / MANIFEST
    if not root.is_dir():
        raise DeployError(f"no index at {root}: not a directory")
    if not path.is_file():
        raise DeployError(f"{root} has no {MANIFEST}: not an index, or a build that did not finish")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise IndexCorruptError(f"index file {path} is not valid JSON ({exc})") from None
    version = raw.get("schema_version") if isinstance(raw, dict) else None
    if version not in READABLE_SCHEMAS:
        readable = " and ".join(str(v) for v in READABLE_SCHEMAS)
        raise DeployError(
            f"{path}: schema_version {version!r} is not supported (this embedding-ttc "
            f"{__version__} reads versions {readable}); rebuild the index"
        )
    try:
        return Manifest.model_validate(raw)
    except ValidationError as exc:
        raise IndexCorruptError(f"index file {path} is malformed: {exc}") from None
