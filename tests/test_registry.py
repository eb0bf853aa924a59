import pytest

from embedding_ttc.errors import UnknownNameError
from embedding_ttc.registry import Registry


def test_duplicate_name_is_an_error():
    reg: Registry[int] = Registry("thing")
    reg.register("a", 1)
    with pytest.raises(ValueError, match="already registered"):
        reg.register("a", 2)


def test_unknown_name_suggests_closest():
    reg: Registry[int] = Registry("encoder")
    for name in ("all-MiniLM-L6-v2", "e5-small-v2", "e5-base-v2"):
        reg.register(name, 0)
    with pytest.raises(UnknownNameError) as err:
        reg.get("all-minilm-l6")
    assert "Did you mean: all-MiniLM-L6-v2" in str(err.value)
    assert reg.names() == ["all-MiniLM-L6-v2", "e5-small-v2", "e5-base-v2"]
