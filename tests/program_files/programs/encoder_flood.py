"""Asks the encoder for new texts without end: a flood that the encoder budget must stop."""


def program(Q, D, S, ctx):
    i = 0
    while True:
        ctx.encode_fn([f"new text {i} {j}" for j in range(8)])
        i += 1
