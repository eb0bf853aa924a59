"""Ends the interpreter with exit code 3 (static checks bypassed)."""

import os


def program(Q, D, S, ctx):
    os._exit(3)
