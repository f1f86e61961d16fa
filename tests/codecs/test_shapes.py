"""`find_bad_field`'s quick check (a closure per shape node) decides as its walk does, on any body."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.codecs.common import shapes
from toolwire.codecs.common.shapes import SHAPES, find_bad_field

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False), st.text(max_size=3))
_ANY = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=6,
)


def near(shape: Any) -> st.SearchStrategy[Any]:
    """Values shaped like `shape`, with anything at all in some places: most fit, many do not."""
    if isinstance(shape, dict):
        fields = st.fixed_dictionaries({}, optional={key: near(item) for key, item in shape.items()})
        return st.one_of(fields, fields, _ANY)
    if isinstance(shape, list):
        return st.one_of(st.lists(near(shape[0]), max_size=3), _ANY)
    options = shape if isinstance(shape, tuple) else (shape,)
    return st.one_of(*(near(option) if isinstance(option, list) else _SCALARS for option in options), _ANY)


_ALL = [(codec, kind, shape) for codec, kinds in SHAPES.items() for kind, shape in kinds.items()]


@settings(max_examples=300)
@given(data=st.data(), which=st.sampled_from(_ALL))
def test_the_quick_check_agrees_with_the_walk(data: st.DataObject, which: tuple[str, str, Any]) -> None:
    _, _, shape = which
    value = data.draw(near(shape))
    assert find_bad_field(value, shape) == shapes._first_bad(value, shape, "")


def test_a_field_of_the_wrong_type_is_named() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": "hot"}
    assert find_bad_field(body, SHAPES["openai"]["request"]) == ("temperature", "an integer or a number")
    assert find_bad_field(body | {"temperature": True}, SHAPES["openai"]["request"]) == (
        "temperature",
        "an integer or a number",
    )
    assert find_bad_field(body | {"temperature": 0.5}, SHAPES["openai"]["request"]) is None
