"""Never returns."""


def program(Q, D, S, ctx):
    n = 0
    while True:
        n += 1
