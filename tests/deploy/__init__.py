"""Tests of embedding_ttc.deploy, with a small hand-written corpus shared by its modules."""

from __future__ import annotations

from embedding_ttc.deploy.corpus import Document

TEXTS = [
    ("Cats", "The cat sat on the mat. It purred all afternoon."),
    ("", "Dogs bark at the postman. The postman runs away."),
    ("Markets", "Stock markets fell sharply. Investors sold their shares."),
    ("", "Interest rates and inflation rose together. The bank acted."),
    ("Bread", "A recipe for bread. Knead the dough for ten minutes."),
    ("", "Rain is expected tomorrow. Take an umbrella to work."),
    ("Chess", "The knight moves in an L shape. The bishop moves diagonally."),
    ("", "Volcanoes erupt when pressure builds. Lava flows downhill."),
]
QUERIES = ["sleeping cats", "inflation and interest rates", "baking bread at home", "chess moves"]


def corpus(n: int = len(TEXTS), start: int = 0) -> list[Document]:
    """``n`` documents ``d{start}``... cycling through :data:`TEXTS`."""
    return [Document(f"d{i}", *TEXTS[i % len(TEXTS)]) for i in range(start, start + n)]
