"""Writes a frame announcing a 10 GB payload on the protocol pipe (static checks bypassed)."""

import os
import sys
import time


def program(Q, D, S, ctx):
    fd = int(sys.argv[2])
    header = b'{"kind":"encode"}'
    prefix = b"ETC1" + len(header).to_bytes(4, "big") + (10 * 2**30).to_bytes(8, "big")
    os.write(fd, prefix + header)
    time.sleep(30)
    return S
