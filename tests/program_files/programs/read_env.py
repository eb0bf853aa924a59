"""Looks for the parent's secret in its environment; returns 1.0 everywhere if found."""

import os


def program(Q, D, S, ctx):
    found = "SECRET_VALUE" in repr(dict(os.environ))
    return S * 0.0 + (1.0 if found else 0.0)
