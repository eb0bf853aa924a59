import base64
import io
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from embedding_ttc.analysis.cells import CellStore
from embedding_ttc.analysis.figure_data.build import FIGURE_NAMES
from embedding_ttc.analysis.figures.registry import FIGURES
from embedding_ttc.analysis.heads import LEARNED_HEAD
from embedding_ttc.analysis.inputs import ReportError, load_search_run
from embedding_ttc.analysis.report import write_report
from embedding_ttc.analysis.report_page import build_page
from embedding_ttc.cli.analysis import main
from embedding_ttc.runs.config import ProposerSpec, RunConfig, write_run_config
from ledger_records import evaluated

from .cell_factory import cell

ENCODERS = ["enc-a", "enc-b"]
TASKS = ["birco_arguana", "t2"]
DISCOVERY = ["d1", "d2"]
PROGRAMS = [
    "P0",
    "BidirZScore",
    "LexicalHybridRRF",
    "SoftCentroid",
    "Rocchio:K=2,beta=0.1",
    "Rocchio:K=3,beta=0.5",
]
# (Δ, extra calls per 100 base calls) per program; varied per encoder and task below.
SHAPE = {
    "BidirZScore": (-0.02, 20),
    "LexicalHybridRRF": (0.03, 290),
    "SoftCentroid": (0.04, 0),
    "Rocchio:K=2,beta=0.1": (0.01, 0),
    "Rocchio:K=3,beta=0.5": (0.02, 0),
}


def write_matrix(out: Path, *, search_run: Path | None = None, heads: bool = True) -> None:
    store = CellStore(out)
    for e_i, e in enumerate(ENCODERS):
        for t_i, t in enumerate(TASKS):
            store.write(cell(e, t, "P0", 0.0))
            for p, (delta, extra) in SHAPE.items():
                d = delta * (1 + e_i) * (-1 if t_i and p == "SoftCentroid" else 1)
                store.write(cell(e, t, p, d, sig=1 if d > 0.03 else 0, prog=extra))
            store.write(cell(e, t, LEARNED_HEAD, -0.01 - 0.01 * t_i, sig=-1))
        for t in DISCOVERY:
            store.write(cell(e, t, LEARNED_HEAD, 0.2 + 0.02 * e_i))
            if e == ENCODERS[0]:
                for p, (delta, extra) in SHAPE.items():
                    store.write(cell(e, t, p, delta / 2, prog=extra))
    manifest = {
        "schema_version": 1,
        "kind": "transfer_manifest",
        "command": ["embedding-ttc", "transfer", "--out", str(out)],
        "suite": "heldout",
        "tasks": TASKS,
        "discovery_suite": "discovery",
        "discovery_tasks": DISCOVERY,
        "encoders": ENCODERS,
        "programs": PROGRAMS,
        "bootstrap": 1000,
        "seed": 0,
        "executor": "inprocess",
        "embedding_ttc": "0.1.0",
        "search_run": str(search_run) if search_run else None,
    }
    (out / "transfer.json").write_text(json.dumps(manifest), encoding="utf-8")
    if heads:
        (out / "heads").mkdir()
        for e in ENCODERS:
            record = {
                "schema_version": 1,
                "kind": "head_training",
                "encoder": e,
                "chosen": "linear",
                "seed": 0,
                "n_train_pairs": 500,
                "n_validation_queries": 40,
                "families": [
                    {
                        "family": "linear",
                        "parameters": 147456,
                        "train_seconds": 3.2,
                        "validation_ndcg_at_10": 0.61,
                        "discovery_ndcg_at_10": 0.72,
                    }
                ],
            }
            (out / "heads" / f"{e}.json").write_text(json.dumps(record), encoding="utf-8")


def ledger_line(gen, pid, mean, cost, per_task):
    return evaluated(gen, pid, per_task, mean_delta=mean, cost_ratio=cost).model_dump_json()


def write_search_run(run: Path) -> Path:
    run.mkdir(parents=True)
    lines = [
        ledger_line(0, "g0000-P0", 0.0, 1.0, {"d1": 0.0, "d2": 0.0}),
        ledger_line(1, "g0001", 0.1, 1.0, {"d1": 0.2, "d2": 0.0}),
        ledger_line(2, "g0002", 0.05, 2.0, {"d1": 0.0, "d2": 0.1}),
        ledger_line(3, "g0003", 0.2, 3.0, {"d1": 0.1, "d2": 0.3}),
    ]
    (run / "ledger.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = RunConfig(
        suite="discovery",
        tasks=DISCOVERY,
        encoder="enc-a",
        proposer=ProposerSpec(strategy="external", options={"peer": "test"}),
        model=None,
        seed=0,
        shortlist=None,
    )
    write_run_config(run, config)
    return run


@pytest.fixture(scope="module")
def full_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    run = write_search_run(root / "search")
    out = root / "matrix"
    out.mkdir()
    write_matrix(out, search_run=run)
    page = build_page(out)
    return page, write_report(page)


class _Dom(HTMLParser):
    """Figures and skipped notices of a report page, by their data-figure name."""

    def __init__(self):
        super().__init__()
        self.figures: dict[str, dict[str, str]] = {}
        self.skipped: dict[str, str] = {}
        self.body: dict[str, str] = {}
        self._open: str | None = None
        self._skip: str | None = None
        self.srcs: list[str] = []
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        if "src" in a:
            self.srcs.append(a["src"])
        if "href" in a:
            self.hrefs.append(a["href"])
        if tag == "body":
            self.body = a
        if tag == "figure" and "data-figure" in a:
            self._open = a["data-figure"]
            self.figures[self._open] = {}
        elif tag == "img" and self._open is not None:
            self.figures[self._open] = a
        elif tag == "div" and a.get("data-skipped") == "true":
            self._skip = a["data-figure"]
            self.skipped[self._skip] = ""

    def handle_endtag(self, tag):
        if tag == "figure":
            self._open = None
        elif tag == "div":
            self._skip = None

    def handle_data(self, data):
        if self._skip is not None:
            self.skipped[self._skip] += data


def parse(text: str) -> _Dom:
    dom = _Dom()
    dom.feed(text)
    return dom


def png_of(src: str) -> Image.Image:
    prefix = "data:image/png;base64,"
    assert src.startswith(prefix) and len(src) > len(prefix) + 100
    image = Image.open(io.BytesIO(base64.b64decode(src[len(prefix) :])))
    assert image.format == "PNG"
    return image


def test_the_renderers_registry_names_every_figure():
    assert tuple(FIGURES) == FIGURE_NAMES


def test_report_writes_tables_every_figure_and_one_self_contained_page(full_report):
    page, files = full_report
    assert files.drawn == FIGURE_NAMES and files.skipped == ()
    out = page.out
    for name in FIGURE_NAMES:
        with Image.open(out / "figures" / f"{name}.png") as image:
            assert image.width > 0 and image.height > 0
        assert (out / "figures" / f"{name}.svg").read_text().lstrip().startswith("<?xml")
    for stem in ("heldout", "programs", "prf", "deltas", "cells"):
        for ext in ("md", "csv", "tex"):
            assert (out / "tables" / f"{stem}.{ext}").is_file()
    assert (out / "tables" / "report.md").is_file()
    text = files.html.read_text(encoding="utf-8")
    dom = parse(text)
    assert set(dom.figures) == set(FIGURE_NAMES) and not dom.skipped
    for name, img in dom.figures.items():
        assert png_of(img["src"]).width > 0, name
    # Nothing is fetched: every src is an inline image, every link an anchor in the page.
    assert all(s.startswith("data:image/png;base64,") for s in dom.srcs)
    assert all(h.startswith("#") for h in dom.hrefs)
    assert not re.search(r"(?:src|href)\s*=\s*[\"']?(?:https?:)?//", text)
    # The header states the layout, the cells and the bootstrap.
    assert "2: enc-a, enc-b" in text and "2: birco_arguana, t2" in text
    assert "enc-a on 2 tasks: d1, d2" in text
    r = page.report
    assert f"{len(r.cells)} of {len(r.cells) + len(r.missing)} present" in text
    assert "1,000 resamples, base seed 0 per transfer.json" in text
    assert str(page.search.path) in text and "enc-a (linear), enc-b (linear)" in text
    assert "Learned heads (training-time baseline)" in text


def test_report_layout_and_figure_data_from_the_store(full_report):
    page, _ = full_report
    r = page.report
    assert r.encoders == tuple(ENCODERS) and r.tasks == tuple(TASKS)
    assert r.programs == (*PROGRAMS[1:], LEARNED_HEAD)  # the heads' cells extend the layout
    assert any("programs beyond transfer.json" in n and LEARNED_HEAD in n for n in page.notes)
    assert LEARNED_HEAD not in r.oracle.programs
    bars = page.figures["encoder_bars"]
    assert bars.program == "LexicalHybridRRF"
    assert [b.median_delta for b in bars.bars] == pytest.approx([0.03, 0.06])
    tvt = page.figures["train_vs_test"]
    assert tvt.head.cost_ratio == 1.0 and tvt.head.median_delta == pytest.approx(-0.015)
    assert [h.in_domain_delta for h in tvt.heads] == pytest.approx([0.2, 0.22])
    assert [h.heldout_median for h in tvt.heads] == pytest.approx([-0.015, -0.015])
    prf = page.figures["prf"]
    assert [(b.encoder, b.rocchio_program) for b in prf.bars] == [
        ("enc-a", "Rocchio:K=3,beta=0.5"),
        ("enc-b", "Rocchio:K=3,beta=0.5"),
    ]
    assert [b.soft_centroid_delta for b in prf.bars] == pytest.approx([0.04, 0.08])
    pareto = page.figures["pareto"]
    assert [p.program_id for p in pareto.frontier] == ["g0001", "g0003"]
    assert page.figures["trajectory"].method == "pca"  # 4 programs: below UMAP's minimum


def test_figures_without_data_are_skipped_with_their_reasons(tmp_path):
    store = CellStore(tmp_path)
    for t in ("t1", "t2"):
        store.write(cell("enc-a", t, "P0", 0.0))
        store.write(cell("enc-a", t, "BidirZScore", 0.01))
    page = build_page(tmp_path)
    files = write_report(page)
    reasons = {s.figure: s.reason for s in files.skipped}
    assert set(reasons) == {"pareto", "trajectory", "prf", "prf_tasks"}
    assert "--search-run" in reasons["pareto"] and "--search-run" in reasons["trajectory"]
    assert "has no Rocchio variant" in reasons["prf"] or "has no SoftCentroid" in reasons["prf"]
    assert set(files.drawn) == {"heatmap", "encoder_bars", "encoder_bars_all", "train_vs_test"}
    text = files.html.read_text(encoding="utf-8")
    dom = parse(text)
    assert set(dom.skipped) == set(reasons) and set(dom.figures) == set(files.drawn)
    for name, shown in dom.skipped.items():
        assert reasons[name] in shown.replace("\n", " ")
    assert "(b) Right panel omitted: no learned-head records" in text
    assert "no transfer.json: the layout is that of the cells found" in text
    assert not (tmp_path / "figures" / "pareto.png").exists()


def test_a_report_without_cells_is_an_error(tmp_path):
    with pytest.raises(ReportError, match="no cells under"):
        build_page(tmp_path)


def test_search_run_errors_name_the_file(tmp_path):
    with pytest.raises(ReportError, match=re.escape(str(tmp_path / "ledger.jsonl"))):
        load_search_run(tmp_path)
    run = write_search_run(tmp_path / "run")
    ledger = run / "ledger.jsonl"
    good = ledger.read_text()
    ledger.write_text(good + '{"generation": 4, "program_id"')  # a kill mid-append
    assert len(load_search_run(run).records) == 4
    assert ledger.read_text().endswith('"program_id"')  # read only: nothing truncated
    ledger.write_text(good.replace('"proposer":"test"', '"proposer":"test","x":1', 1))
    with pytest.raises(ReportError, match=re.escape(f"{ledger}:1: not a ledger record")):
        load_search_run(run)


def test_report_command_and_its_errors(tmp_path, capsys):
    out = tmp_path / "matrix"
    out.mkdir()
    write_matrix(out, heads=False)
    assert main(["report", str(out), "--search-run", str(tmp_path / "nope")]) == 2
    assert str(tmp_path / "nope" / "ledger.jsonl") in capsys.readouterr().err
    assert main(["report", str(out), "--program", "LexHybrid"]) == 2
    assert "Did you mean: LexicalHybridRRF" in capsys.readouterr().err
    run = write_search_run(tmp_path / "run")
    assert main(["report", str(out), "--search-run", str(run), "--program", "SoftCentroid"]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == str(out / "report.html")
    assert "not drawn: " not in captured.err
    assert "SoftCentroid (asked for)" in (out / "report.html").read_text(encoding="utf-8")


def test_transfer_records_the_search_run_in_its_manifest(tmp_path, capsys):
    out = tmp_path / "matrix"
    store = CellStore(out)
    for p in ("P0", "SoftCentroid"):  # every cell present: nothing to compute, no encoder loaded
        store.write(cell("enc-a", "scifact", p, 0.0 if p == "P0" else 0.01))
    base = [
        "transfer",
        "--encoders",
        "enc-a",
        "--programs",
        "P0,SoftCentroid",
        "--task",
        "scifact",
        "--discovery-suite",
        "none",
        "--bootstrap",
        "1000",
        "--data-dir",
        str(tmp_path),
        "--out",
        str(out),
        "--no-progress",
    ]
    assert main([*base, "--search-run", str(tmp_path / "missing")]) == 2
    assert str(tmp_path / "missing" / "ledger.jsonl") in capsys.readouterr().err
    run = write_search_run(tmp_path / "run")
    assert main([*base, "--search-run", str(run)]) == 0
    manifest = json.loads((out / "transfer.json").read_text())
    relative = os.path.relpath(run.resolve(), out.resolve())  # moves with the matrix
    assert manifest["search_run"] == relative
    assert main(base) == 0  # a later run without the flag keeps the recorded search
    assert json.loads((out / "transfer.json").read_text())["search_run"] == relative
    page = build_page(out)
    assert page.search is not None and page.search.path == run.resolve()


CHROMIUM = next(
    (
        found
        for name in ("chromium", "chromium-browser", "google-chrome", "chrome")
        if (found := shutil.which(name))
    ),
    None,
)

# Run after the page's load event: records what Chromium decoded for every image.
PROBE = """<script>
window.addEventListener("load", function () {
  for (const img of document.images) {
    img.setAttribute("data-natural-width", String(img.naturalWidth));
    img.setAttribute("data-natural-height", String(img.naturalHeight));
  }
  document.body.setAttribute("data-probed", "yes");
});
</script>"""


def chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}"]
    return subprocess.run(
        [CHROMIUM, *flags, *args], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium binary on PATH (apt-get install chromium)"
)
def test_report_renders_in_headless_chromium(full_report, tmp_path):
    _, files = full_report
    probe = tmp_path / "probe.html"
    probe.write_text(
        files.html.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
        encoding="utf-8",
    )
    done = chromium("--dump-dom", probe.as_uri(), profile=tmp_path / "profile")
    assert done.returncode == 0, done.stderr[-2000:]
    dom = parse(done.stdout)
    assert dom.body.get("data-probed") == "yes"  # the load event ran
    assert set(dom.figures) == set(FIGURE_NAMES)
    for name, img in dom.figures.items():
        decoded = png_of(img["src"])
        assert int(img["data-natural-width"]) == decoded.width > 0, name
        assert int(img["data-natural-height"]) == decoded.height > 0, name
    shot = tmp_path / "shot.png"
    done = chromium(
        f"--screenshot={shot}",
        "--window-size=1200,1600",
        files.html.as_uri(),
        profile=tmp_path / "profile",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    with Image.open(shot) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 50  # a rendered page, not a blank one


def test_a_recorded_search_run_that_is_gone_names_the_manifest(tmp_path):
    out = tmp_path / "matrix"
    out.mkdir()
    write_matrix(out, search_run=tmp_path / "gone", heads=False)
    with pytest.raises(ReportError, match=r"gone/ledger\.jsonl does not exist.*transfer\.json"):
        build_page(out)
    run = write_search_run(tmp_path / "run")
    assert build_page(out, search_run=run).search.path == run


def test_a_study_in_pieces_keeps_its_discovery_column(tmp_path, capsys):
    """--discovery-only computes the column alone; held-out pieces keep it in the manifest."""
    out = tmp_path / "matrix"
    store = CellStore(out)
    disc = ["aila_statutes", "financebench"]
    for p in ("P0", "SoftCentroid"):  # every cell present: nothing to compute, no encoder loaded
        delta = 0.0 if p == "P0" else 0.01
        for enc in ("enc-a", "enc-b"):
            store.write(cell(enc, "scifact", p, delta))
        for task in disc:
            store.write(cell("enc-a", task, p, delta))
    common = ["--programs", "P0,SoftCentroid", "--bootstrap", "1000", "--data-dir", str(tmp_path)]
    common += ["--out", str(out), "--no-progress", "--task", "scifact"]
    column = ["--discovery-suite", "smoke"]  # its tasks: aila_statutes, financebench, limit-small
    store.write(cell("enc-a", "limit-small", "P0", 0.0))
    store.write(cell("enc-a", "limit-small", "SoftCentroid", -0.01))

    assert main(["transfer", "--encoders", "enc-a", *column, "--discovery-only", *common]) == 0
    assert "transfer: 6 cells planned, 6 present" in capsys.readouterr().err
    manifest = json.loads((out / "transfer.json").read_text())
    assert manifest["tasks"] == ["scifact"] and manifest["discovery_encoder"] == "enc-a"

    # a held-out piece of the other encoder, without a column of its own, keeps enc-a's
    piece = ["transfer", "--encoders", "enc-b", "--discovery-suite", "none", *common]
    assert main(piece) == 0
    manifest = json.loads((out / "transfer.json").read_text())
    assert manifest["discovery_encoder"] == "enc-a" and manifest["discovery_suite"] == "smoke"
    assert manifest["encoders"] == ["enc-b"]
    layout = build_page(out).layout
    assert layout.discovery_encoder == "enc-a"
    assert layout.discovery_tasks == ("aila_statutes", "financebench", "limit-small")
    assert layout.encoders == ("enc-a", "enc-b")  # the discovery encoder leads

    none = ["transfer", "--encoders", "enc-a", "--discovery-suite", "none", "--discovery-only"]
    assert main([*none, *common]) == 2
    assert "--discovery-only computes the discovery column" in capsys.readouterr().err


def test_held_out_tasks_are_laid_out_in_the_suite_order_whatever_the_last_piece_named():
    from embedding_ttc.analysis.manifest import TransferManifest
    from embedding_ttc.analysis.report_page import resolve_layout

    cells = [cell("enc-a", t, p, 0.0) for t in ("medquad", "scifact", "cranfield") for p in ("P0",)]
    manifest = TransferManifest(
        command=["embedding-ttc", "transfer", "--task", "medquad", "--task", "cranfield"],
        suite="heldout",
        tasks=["medquad", "cranfield"],
        discovery_suite="none",
        discovery_tasks=[],
        encoders=["enc-a"],
        programs=["P0"],
        bootstrap=1000,
        seed=0,
        executor="inprocess",
        embedding_ttc="0.1.0",
    )
    assert resolve_layout(manifest, cells).tasks == ("scifact", "cranfield", "medquad")
