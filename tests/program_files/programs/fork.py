"""Forks a child that would outlive the call (static checks bypassed)."""

import os
import time


def program(Q, D, S, ctx):
    pid = os.fork()
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    return S
