"""Where a task name resolves: data root order, the user data folder, the packaged fallback."""

import json
import sys
from pathlib import Path

import pytest

from embedding_ttc.cli import main
from embedding_ttc.errors import DatasetError, UnknownNameError
from embedding_ttc.tasks import catalog
from embedding_ttc.tasks.catalog import (
    available_task_names,
    find_data_root,
    load_task,
    resolve_data_root,
    suite_tasks,
    user_data_dir,
)
from embedding_ttc.tasks.fingerprint import task_fingerprint
from embedding_ttc.tasks.packaged import PACKAGED_TASKS, load_packaged_task


def _tiny_task(folder: Path, text: str = "a cat") -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "text": text}) + "\n")
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "cat"}\n')
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return folder


@pytest.fixture()
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """No data root anywhere: no env, no ../shared, an empty XDG data home (all in tmp_path)."""
    monkeypatch.delenv("EMBEDDING_TTC_DATA", raising=False)
    shared = tmp_path / "shared" / "datasets"
    monkeypatch.setattr(catalog, "_shared_candidates", lambda: [shared])
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    return {
        "explicit": tmp_path / "explicit",
        "env": tmp_path / "env",
        "shared": shared,
        "user": tmp_path / "xdg" / "embedding-ttc" / "datasets",
    }


def test_the_user_data_dir_follows_xdg_and_defaults_to_local_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "x"))
    assert user_data_dir() == tmp_path / "x" / "embedding-ttc" / "datasets"
    monkeypatch.delenv("XDG_DATA_HOME")
    if sys.platform != "linux":
        pytest.skip("~/.local/share is the Linux default (platformdirs elsewhere)")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    expected = tmp_path / "home" / ".local" / "share" / "embedding-ttc" / "datasets"
    assert user_data_dir() == expected


def test_the_data_root_is_the_first_that_exists_in_order(
    places: dict[str, Path], monkeypatch: pytest.MonkeyPatch
):
    assert find_data_root() is None
    for key in ("user", "shared", "env", "explicit"):  # each added folder wins over the last
        places[key].mkdir(parents=True)
        if key == "user":  # the user folder counts once it holds a task (the others by name)
            assert find_data_root() is None
            _tiny_task(places[key] / "tiny")
        if key == "env":
            monkeypatch.setenv("EMBEDDING_TTC_DATA", str(places["env"]))
        explicit = places["explicit"] if key == "explicit" else None
        assert find_data_root(explicit) == places[key]
        assert resolve_data_root(explicit) == places[key]


def test_what_a_failed_fetch_leaves_in_the_user_folder_does_not_make_it_the_data_root(
    places: dict[str, Path],
):
    user = places["user"]
    user.mkdir(parents=True)
    (user / ".scifact.lock").touch()  # a fetch that failed: its lock and its staging folder
    (user / ".scifact.staging-1234").mkdir()
    assert find_data_root() is None
    with pytest.raises(DatasetError, match="no data root"):
        resolve_data_root()


def test_a_folder_asked_for_by_name_must_exist(places: dict[str, Path], monkeypatch):
    places["user"].mkdir(parents=True)
    with pytest.raises(DatasetError, match=r"--data-dir .* is not a directory"):
        find_data_root(places["explicit"])
    monkeypatch.setenv("EMBEDDING_TTC_DATA", str(places["env"]))
    with pytest.raises(DatasetError, match=r"\$EMBEDDING_TTC_DATA=.* is not a directory"):
        find_data_root()


def test_with_no_data_root_the_packaged_tasks_load(places: dict[str, Path]):
    assert find_data_root() is None
    assert available_task_names(None)[:3] == list(PACKAGED_TASKS)
    for name in suite_tasks("quickstart"):
        task = load_task(name)
        assert task_fingerprint(task) == task_fingerprint(load_packaged_task(name))
        assert "/packaged/" in task.metadata["folder"].replace("\\", "/")
    with pytest.raises(DatasetError, match="no data root") as err:
        resolve_data_root()
    assert "aila_statutes" in str(err.value) and "data fetch" in str(err.value)


def test_with_no_data_root_another_task_fails_in_one_line_saying_how_to_get_it(places):
    with pytest.raises(UnknownNameError) as err:
        load_task("scifact")
    message = str(err.value)
    assert "\n" not in message
    for part in (
        "unknown task 'scifact' (no data root; not packaged)",
        "Packaged: aila_statutes, legal_summarization, limit-small",
        "--data-dir",
        "$EMBEDDING_TTC_DATA",
        "embedding-ttc data fetch scifact",
    ):
        assert part in message


def test_a_misspelt_task_suggests_the_close_name_and_never_fetching_the_misspelling(places):
    with pytest.raises(UnknownNameError) as err:
        load_task("aila_statute")
    message = str(err.value)
    assert "Did you mean: aila_statutes?" in message
    assert "data fetch" not in message


def test_an_unknown_unfetchable_task_suggests_a_data_folder_and_a_fetchable_close_name(places):
    with pytest.raises(UnknownNameError) as err:
        load_task("scifacts")
    message = str(err.value)
    assert "data fetch scifacts" not in message
    assert "(fetchable nearby: `embedding-ttc data fetch scifact`)" in message
    with pytest.raises(UnknownNameError) as err:
        load_task("my_corpus")
    assert "--data-dir" in str(err.value) and "data fetch" not in str(err.value)


def test_with_no_data_root_a_generated_task_names_its_source(places):
    with pytest.raises(DatasetError, match="generated from the 'lemb_qmsum' task folder") as err:
        load_task("lemb_passkey")
    # lemb_qmsum is no BEIR archive: `data fetch` cannot get it, so it is not suggested
    assert "--data-dir" in str(err.value) and "data fetch" not in str(err.value)


def test_a_data_root_folder_wins_over_a_packaged_task(places: dict[str, Path]):
    _tiny_task(places["user"] / "limit-small", text="a local stand-in")
    assert find_data_root() == places["user"]
    task = load_task("limit-small")
    assert task.n_docs == 1 and task.doc_bodies[0] == "a local stand-in"
    assert load_task("aila_statutes").n_docs == 82  # not in the data root: packaged
    names = available_task_names(places["user"])
    assert names.count("limit-small") == 1 and "aila_statutes" in names


def test_a_missing_task_under_a_data_root_names_the_folder(places: dict[str, Path]):
    _tiny_task(places["user"] / "tiny")
    with pytest.raises(UnknownNameError, match=r"no folder .*scifact; not packaged"):
        load_task("scifact")


def test_evaluate_with_no_data_root_fails_with_one_clear_line(places, tmp_path, capsys):
    assert main(["evaluate", "--task", "scifact", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert "embedding-ttc data fetch scifact" in err and "\n" not in err
    # a suite with one task missing fails before the packaged ones are encoded
    cache = tmp_path / "cache"
    argv = ["evaluate", "--suite", "smoke", "--no-progress", "--cache-dir", str(cache)]
    assert main(argv) == 2
    assert "unknown task 'financebench'" in capsys.readouterr().err
    assert not cache.exists()


def test_the_quickstart_suite_and_program_group_resolve():
    from embedding_ttc.programs.catalog import QUICKSTART, resolve_program_names

    assert suite_tasks("quickstart") == list(PACKAGED_TASKS)
    names = resolve_program_names(["quickstart"])
    assert names == list(QUICKSTART) and names[:2] == ["P0", "BM25DenseRRF"]


def test_the_quickstart_programs_encode_nothing_beyond_p0():
    """c = 1 by construction: no index-time artifact and no query-time encode of their own."""
    from embedding_ttc.programs.catalog import QUICKSTART, recipe_for

    for name in QUICKSTART:
        recipe = recipe_for(name)
        assert recipe.artifacts == () and recipe.amortised, f"{name} encodes more than P0"
