"""Prints 10 MB."""


def program(Q, D, S, ctx):
    line = "x" * 999
    for _ in range(10_000):
        print(line)
    return S
