"""Encoders: the protocol, views, metering, the on-disk cache, backends and the registry."""

from embedding_ttc.encoders.base import (
    CLASSIFICATION,
    PASSAGE,
    QUERY,
    TEXT_MATCHING,
    VIEWS,
    BaseEncoder,
    Encoder,
    EncoderInfo,
    ViewSpec,
)

__all__ = [
    "CLASSIFICATION",
    "PASSAGE",
    "QUERY",
    "TEXT_MATCHING",
    "VIEWS",
    "BaseEncoder",
    "Encoder",
    "EncoderInfo",
    "ViewSpec",
]
