"""Imports a module that was not loaded before it started (static checks bypassed).

ftplib, not subprocess: Python 3.10's own start-up has already loaded subprocess.
"""


def program(Q, D, S, ctx):
    import ftplib

    return S + len(ftplib.__name__) * 0
