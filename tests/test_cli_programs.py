"""``embedding-ttc programs``: every program described from itself; ``--json`` prints only JSON."""

from __future__ import annotations

import json

from embedding_ttc.cli import main
from embedding_ttc.programs.catalog import FRONTIER, GROUPS, PROGRAMS, get_program
from embedding_ttc.programs.recipe import recipe_of


def test_programs_json_lists_every_program_with_its_recipe_and_nothing_else(capsys):
    assert main(["programs", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    listing = json.loads(out)  # the whole of stdout is one JSON document
    entries = {e["name"]: e for e in listing["programs"]}
    assert list(entries) == PROGRAMS.names()
    for name, entry in entries.items():
        program = get_program(name)
        recipe = recipe_of(program)
        assert entry["version"] == getattr(program, "version", 1)
        assert entry["description"], f"{name} has no docstring line"
        assert entry["index_time"] == [a.describe() for a in recipe.artifacts]
        assert entry["query_encodes_collapsed"] == recipe.query_encodes_collapsed
        assert entry["batch"] == recipe.batch
    assert entries["BidirZScore"]["groups"] == ["frontier", "paper"]
    assert entries["SoftCentroid"]["index_time"] == []
    # parametrised members count for their base name
    assert "rocchio-grid" in entries["Rocchio"]["groups"]
    assert listing["groups"]["paper"] == list(FRONTIER)
    assert set(listing["groups"]) == {"all", *GROUPS}


def test_piped_listing_is_plain_text_with_whole_names(capsys):
    assert main(["programs"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split("\t")[:3] == ["name", "groups", "version"]
    names = [line.split("\t")[0] for line in lines[1 : 1 + len(PROGRAMS.names())]]
    assert names == PROGRAMS.names()  # never truncated, never wrapped, whatever the width
    assert "│" not in out and "\x1b[" not in out
