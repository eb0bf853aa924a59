"""Programs over a frozen encoder: the protocol, its context, and the registry."""

from embedding_ttc.programs.base import Context, EncodeFn, Matrix, Program
from embedding_ttc.programs.catalog import PROGRAMS, get_program

__all__ = ["PROGRAMS", "Context", "EncodeFn", "Matrix", "Program", "get_program"]
