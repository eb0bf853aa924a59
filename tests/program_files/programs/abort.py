"""Dies by SIGABRT (static checks bypassed)."""

import os


def program(Q, D, S, ctx):
    os.abort()
