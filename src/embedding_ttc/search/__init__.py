"""Agentic program search (paper §3): proposers, checks, sandbox, ledger, frontier, loop."""
