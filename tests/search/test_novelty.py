"""Structural novelty: names, constants, comments and docstrings do not make a program new."""

from __future__ import annotations

from embedding_ttc.search.novelty import (
    NOVELTY_THRESHOLD,
    closest,
    fingerprint,
    library_structures,
    similarity,
    structure,
)

BASE = '''
"""Sum of z-scored channels."""
import numpy as np

K = 3


def zs(x):
    return (x - x.mean(axis=1, keepdims=True)) / (x.std(axis=1, keepdims=True) + 1e-9)


def program(Q, D, S, ctx):
    top = np.argsort(-S, axis=1)[:, :K]
    centroid = D[top].mean(axis=1)
    moved = Q + 0.5 * centroid
    moved /= np.linalg.norm(moved, axis=1, keepdims=True)
    return zs(S) + zs(moved @ D.T)
'''

RENAMED = """
import numpy as np

TOPK = 5  # a different constant and different names: the same structure


def standardise(m):
    return (m - m.mean(axis=1, keepdims=True)) / (m.std(axis=1, keepdims=True) + 1e-6)


def program(queries, docs, scores, context):
    # feedback
    best = np.argsort(-scores, axis=1)[:, :TOPK]
    c = docs[best].mean(axis=1)
    q2 = queries + 0.7 * c
    q2 /= np.linalg.norm(q2, axis=1, keepdims=True)
    return standardise(scores) + standardise(q2 @ docs.T)
"""

EXTENDED = BASE.replace(
    "    return zs(S) + zs(moved @ D.T)",
    """    lengths = np.log1p(ctx.doc_lengths.astype(np.float32))
    prior = (lengths - lengths.mean()) / (lengths.std() + 1e-9)
    rev = ctx.encode_fn(ctx.doc_texts, view="retrieval.query")
    second = zs((Q @ rev.T).T).T
    return zs(S) + zs(moved @ D.T) + second + 0.1 * prior[None, :]""",
)


def test_names_constants_and_comments_do_not_count():
    assert structure(BASE) == structure(RENAMED)
    assert fingerprint(structure(BASE)) == fingerprint(structure(RENAMED))
    assert similarity(structure(BASE), structure(RENAMED)) == 1.0


def test_a_new_channel_is_novel():
    score = similarity(structure(BASE), structure(EXTENDED))
    assert score < NOVELTY_THRESHOLD


def test_closest_names_the_most_similar():
    registered = {"a": structure(EXTENDED), "b": structure(RENAMED)}
    near = closest(structure(BASE), registered)
    assert near.name == "b" and near.duplicate
    far = closest(structure(BASE), {"a": structure(EXTENDED)})
    assert far.name == "a" and not far.duplicate
    assert far.similarity == similarity(structure(BASE), structure(EXTENDED))


def test_the_library_is_registered_and_its_programs_are_distinct():
    structures = library_structures()
    assert {"library:P0", "library:SoftCentroid", "library:FisherStability"} <= set(structures)
    names = sorted(structures)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert similarity(structures[a], structures[b]) < 1.0, (a, b)
