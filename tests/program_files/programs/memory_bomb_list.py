"""Grows a list until memory runs out."""


def program(Q, D, S, ctx):
    hoard = []
    while True:
        hoard.append(bytes(10**7))
