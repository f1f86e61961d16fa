import pytest

from toolwire import ImagePart, ToolCall, ToolDefinition, ToolResult
from toolwire.types import Usage


def test_tool_name_is_validated_and_named_in_the_error() -> None:
    with pytest.raises(ValueError, match=r"'bad name\.x'"):
        ToolDefinition(name="bad name.x")


def test_image_part_needs_exactly_one_source() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        ImagePart()
    with pytest.raises(ValueError, match="exactly one"):
        ImagePart(data=b"x", url="https://example.com/a.png")


def test_result_constructors_take_id_and_name_from_the_call() -> None:
    call = ToolCall(id="c1", name="f", arguments={})
    assert ToolResult.error(call, "boom") == ToolResult(tool_call_id="c1", name="f", kind="error", value="boom")


def test_usage_plus_sums_what_either_side_reported_and_keeps_none_where_neither_did() -> None:
    first = Usage(input_tokens=10, output_tokens=3)
    second = Usage(input_tokens=4, output_tokens=2, cache_read_tokens=1)
    assert first.plus(second) == Usage(input_tokens=14, output_tokens=5, cache_read_tokens=1)
    assert first.plus(None) == first and first.plus(None) is not first
    assert first == Usage(input_tokens=10, output_tokens=3)  # neither side changes
