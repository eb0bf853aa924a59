"""The base of every record of an index manifest: unknown fields are errors, values frozen."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ManifestRecord(BaseModel):
    """A record of ``manifest.json``: it forbids unknown fields and is frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)
