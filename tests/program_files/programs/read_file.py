"""Reads a file outside its working directory (static checks bypassed)."""


def program(Q, D, S, ctx):
    with open("/etc/hostname") as fh:
        fh.read()
    return S
