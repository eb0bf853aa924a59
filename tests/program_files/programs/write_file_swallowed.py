"""Tries to write a file, swallows the refusal, returns a valid matrix (checks bypassed)."""


def program(Q, D, S, ctx):
    try:
        with open("TARGET_PATH", "w") as fh:
            fh.write("escaped")
    except BaseException:
        pass
    return S.copy()
