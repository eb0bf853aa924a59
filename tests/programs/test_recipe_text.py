"""How a recipe's query-time encodes are said, the same in ``programs`` and ``index build``."""

from __future__ import annotations

from embedding_ttc.programs.recipe import Recipe


def test_encodes_per_query_count_the_query_itself_and_name_collapsed_views():
    assert Recipe().encodes_per_query() == "1"  # P0: the query's own embedding
    assert Recipe(query_encodes=2, query_encodes_collapsed=2).encodes_per_query() == "3"
    both = Recipe(query_encodes=3, query_encodes_collapsed=2)
    assert both.encodes_per_query() == "4 (3 if views collapse)"
