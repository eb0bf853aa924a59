"""Numeric and text primitives that rescoring programs are built from."""
