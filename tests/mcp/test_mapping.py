"""The MCP ↔ toolwire mapping on its own: names, risk, every content kind, both directions."""

from __future__ import annotations

import base64

import pytest
from mcp import types

from toolwire.cache import CACHE, ToolOutputCache
from toolwire.mcp import result_value, tool_risk
from toolwire.mcp._mapping import build_tool, prefixed_names, safe_name
from toolwire.mcp._serve import to_call_result
from toolwire.mcp._truncate import cap_result
from toolwire.tools import ToolContext, ToolError
from toolwire.types import ImagePart, TextPart, ToolResult

PNG = b"\x89PNG\r\n\x1a\nrest"


def mcp_tool(name: str, **hints: bool) -> types.Tool:
    annotations = types.ToolAnnotations(**hints) if hints else None
    return types.Tool(name=name, input_schema={"type": "object"}, annotations=annotations)


def test_risk_is_low_only_for_an_explicit_read_only_hint() -> None:
    assert tool_risk(mcp_tool("a", read_only_hint=True)) == "low"
    assert tool_risk(mcp_tool("b", read_only_hint=True, destructive_hint=True)) == "low"
    assert tool_risk(mcp_tool("c", read_only_hint=False, destructive_hint=False)) == "high"
    assert tool_risk(mcp_tool("d", destructive_hint=False)) == "high"
    assert tool_risk(mcp_tool("e")) == "high"


def test_names_are_made_valid_and_clashes_get_the_server_prefix() -> None:
    assert safe_name("files.read/v2") == "files_read_v2"
    assert safe_name("x" * 80) == "x" * 64
    pairs = [("fs", mcp_tool("read")), ("git", mcp_tool("read")), ("git", mcp_tool("log")), ("fs", mcp_tool("exec"))]
    named = prefixed_names(pairs, reserved={"exec"})
    assert [(spec.server, spec.name) for spec in named] == [
        ("fs", "fs__read"),
        ("git", "git__read"),
        ("git", "log"),
        ("fs", "fs__exec"),
    ]
    twice = prefixed_names([("a", mcp_tool("t.x")), ("a", mcp_tool("t_x"))])
    assert [spec.name for spec in twice] == ["a__t_x", "a__t_x_2"]


def result(*content: types.ContentBlock, error: bool = False, structured: object = None) -> types.CallToolResult:
    return types.CallToolResult(content=list(content), is_error=error, structured_content=structured)


def test_every_content_kind_maps_to_a_result_value() -> None:
    image = types.ImageContent(data=base64.b64encode(PNG).decode(), mime_type="image/png")
    audio = types.AudioContent(data=base64.b64encode(b"abcd").decode(), mime_type="audio/wav")
    link = types.ResourceLink(uri="file:///a.txt", name="a.txt", description="the file")
    text_resource = types.EmbeddedResource(
        resource=types.TextResourceContents(uri="mem://notes", mime_type="text/plain", text="hello")
    )
    blob = types.EmbeddedResource(resource=types.BlobResourceContents(uri="mem://bin", blob="AAAA"))
    assert result_value(result(types.TextContent(text="a"), types.TextContent(text="b")), "s", "t") == "a\nb"
    assert result_value(result(link, text_resource, blob, audio), "s", "t") == (
        "[resource file:///a.txt] a.txt — the file\n[resource mem://notes (text/plain)]\nhello\n"
        "[resource mem://bin, 3 bytes of binary data]\n[audio audio/wav, 4 bytes]"
    )
    assert result_value(result(types.TextContent(text="{}"), structured={"k": 1}), "s", "t") == {"k": 1}
    assert result_value(result(types.TextContent(text="see"), image, structured={"k": 1}), "s", "t") == [
        TextPart(text="see"),
        ImagePart(data=PNG, media_type="image/png"),
    ]
    assert result_value(result(), "s", "t") == ""


def test_is_error_raises_the_servers_text_or_says_there_was_none() -> None:
    with pytest.raises(ToolError) as given:
        result_value(result(types.TextContent(text="no such file"), error=True), "s", "t")
    assert str(given.value) == "no such file"
    with pytest.raises(ToolError) as silent:
        result_value(result(error=True), "'fs'", "read")
    assert str(silent.value) == "MCP server 'fs' reported an error from tool 'read' without a message."


def test_toolwire_results_become_mcp_content() -> None:
    text = to_call_result(ToolResult(tool_call_id="", name="t", kind="text", value="hi"))
    assert (text.is_error, text.content, text.structured_content) == (False, [types.TextContent(text="hi")], None)
    data = to_call_result(ToolResult(tool_call_id="", name="t", kind="data", value={"a": [1]}))
    assert (data.content, data.structured_content) == ([types.TextContent(text='{"a": [1]}')], {"a": [1]})
    listed = to_call_result(ToolResult(tool_call_id="", name="t", kind="data", value=[1, 2]))
    assert (listed.content, listed.structured_content) == ([types.TextContent(text="[1, 2]")], None)
    error = to_call_result(ToolResult(tool_call_id="", name="t", kind="error", value="bad"))
    assert (error.is_error, error.content) == (True, [types.TextContent(text="bad")])
    parts = [TextPart(text="x"), ImagePart(data=PNG, media_type="image/png"), ImagePart(url="https://e/i.png")]
    mixed = to_call_result(ToolResult(tool_call_id="", name="t", kind="multimodal", value=parts))
    assert mixed.content == [
        types.TextContent(text="x"),
        types.ImageContent(data=base64.b64encode(PNG).decode(), mime_type="image/png"),
        types.TextContent(text="[image https://e/i.png]"),
    ]


def test_results_over_the_cap_keep_their_start_and_images_and_the_whole_goes_to_the_cache() -> None:
    cache = ToolOutputCache()
    assert cap_result("short", 10, cache) == "short"
    assert cap_result({"k": "v"}, 10, cache) == {"k": "v"}  # 10 characters as JSON
    assert len(cache) == 0
    data = cap_result({"k": "v" * 20}, 10, cache)
    assert data == '{\n "k": "v' + _note("out_1", 10, 32, 3, 2)
    assert cache.get("out_1") == '{\n "k": "' + "v" * 20 + '"\n}'
    image = ImagePart(data=PNG, media_type="image/png")
    parts = cap_result([TextPart(text="abcdef"), image, TextPart(text="ghijkl")], 10, cache)
    assert parts == [
        TextPart(text="abcdef"),
        image,
        TextPart(text="ghi"),
        TextPart(text=_note("out_2", 10, 13, 2, 2)[1:]),
    ]
    assert cache.get("out_2") == "abcdef\nghijkl"
    assert cap_result("x" * 11, None, cache) == "x" * 11


def test_a_clipped_result_is_cached_in_lines_the_cache_can_show_a_piece_at_a_time() -> None:
    cache = ToolOutputCache()
    one_line = "a" * 2000 + "b" * 2000 + "c" * 5
    assert cap_result(one_line + "\n\nshort", 2003, cache) == "a" * 2000 + "\nbb" + _note("out_1", 2003, 4014, 5, 2)
    assert cache.get("out_1") == "a" * 2000 + "\n" + "b" * 2000 + "\nccccc\n\nshort"
    assert cache.read("out_1", offset=3, limit=1) == "     3\tccccc\n[lines 3-3 of 5; use offset=4 for more]"


def _note(ref: str, limit: int, size: int, lines: int, line: int) -> str:
    return (
        f"\n[result clipped: the first {limit} of {size} characters are shown; the whole result ({lines} lines of at "
        f"most 2000 characters) is {ref} in the tool output cache: tool_output_cache(ref_id='{ref}', offset={line}) "
        f"reads on from line {line}, tool_output_cache_grep(ref_id='{ref}', pattern=...) searches it]"
    )


async def test_an_error_result_over_the_cap_is_clipped_too() -> None:
    async def call(tool: str, arguments: dict[str, object]) -> types.CallToolResult:
        return result(types.TextContent(text=f"{tool} failed: " + "e" * 30), error=True)

    spec = prefixed_names([("srv", mcp_tool("t"))])[0]
    cache = ToolOutputCache()
    failed = await build_tool(spec, call, server_label="srv", max_result_chars=12).execute_raw(
        {}, ToolContext(deps={CACHE.id: cache})
    )
    assert (failed.kind, failed.value) == ("error", "t failed: ee" + _note("out_1", 12, 40, 1, 1))
    assert cache.get("out_1") == "t failed: " + "e" * 30
