"""Connects to 127.0.0.1 (static checks bypassed)."""

import socket


def program(Q, D, S, ctx):
    with socket.create_connection(("127.0.0.1", 9), timeout=1):
        pass
    return S
