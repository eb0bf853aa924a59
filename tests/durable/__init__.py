"""Tests of embedding_ttc.durable: atomic files, JSONL records, staged folders."""
