"""Writes a file at TARGET_PATH (static checks bypassed; the test fills in the path)."""


def program(Q, D, S, ctx):
    with open("TARGET_PATH", "w") as fh:
        fh.write("escaped")
    return S
