"""Reaches os through the dunder escape and sends itself SIGSEGV (static checks bypassed)."""


def program(Q, D, S, ctx):
    for cls in ().__class__.__base__.__subclasses__():
        if cls.__name__ == "_wrap_close":
            g = cls.__init__.__globals__
            g["kill"](g["getpid"](), 11)
    return S
