"""Imports a module that was not loaded before it started (static checks bypassed)."""


def program(Q, D, S, ctx):
    import subprocess

    return subprocess.run(["true"]).returncode + S
