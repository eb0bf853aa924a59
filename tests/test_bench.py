"""The benchmark's mechanics (not its timings: those are printed, never asserted)."""

import re

from embedding_ttc.bench import run_bench
from embedding_ttc.cli import main


def test_bench_runs_cold_then_warm_and_prints_its_line(packaged_datasets, capsys):
    lines: list[str] = []
    report = run_bench(
        suite="smoke",
        encoder_name="tokenlearn-static-64",
        data_dir=packaged_datasets,
        tasks=["aila_statutes"],
        log=lines.append,
    )
    assert report.tasks == ["aila_statutes"]
    assert report.cold.ndcg == report.warm.ndcg
    assert report.warm.forward_seconds == 0.0 < report.cold.forward_seconds
    assert re.fullmatch(r"overhead=-?\d+\.\d{4} warm_speedup=\d+\.\d", report.last_line())
    assert any(line.startswith("warm aila_statutes") for line in lines)

    code = main(
        [
            "bench",
            "--encoder",
            "tokenlearn-static-64",
            "--task",
            "legal_summarization",
            "--data-dir",
            str(packaged_datasets),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith("overhead=") and "warm_speedup=" in out[-1]
