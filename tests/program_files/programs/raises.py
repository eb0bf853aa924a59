"""Raises a ValueError from a helper."""


def helper(x):
    raise ValueError(f"bad value {x}")


def program(Q, D, S, ctx):
    return helper(42)
