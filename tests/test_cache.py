import subprocess
import sys
from collections.abc import Callable

import pytest

from toolwire import ToolCall, ToolResult, UserMessage
from toolwire.cache import STUB_KEY, CacheLookupError, ToolOutputCache, trim_history

TEXT = "alpha\nbeta one\ngamma\ndelta one\nepsilon\nzeta\neta one"


def test_read_numbers_lines_and_pages() -> None:
    cache = ToolOutputCache()
    ref = cache.put(TEXT)
    assert ref == "out_1"
    assert cache.read(ref, offset=2, limit=2) == (
        "     2\tbeta one\n     3\tgamma\n[lines 2-3 of 7; use offset=4 for more]"
    )
    assert cache.read(ref, offset=6) == "     6\tzeta\n     7\teta one"


def test_grep_plain_with_context_and_gaps() -> None:
    cache = ToolOutputCache()
    ref = cache.put(TEXT)
    assert cache.grep(ref, "one", before=1) == (
        "     1-\talpha\n     2:\tbeta one\n     3-\tgamma\n     4:\tdelta one\n--\n     6-\tzeta\n     7:\teta one"
    )
    assert cache.grep(ref, "one", max_matches=1) == (
        "     2:\tbeta one\n[stopped after 1 matching lines; raise max_matches or narrow the pattern]"
    )
    assert cache.grep(ref, "nothing") == "No lines of out_1 match 'nothing'."


def test_grep_regex_and_after_context() -> None:
    cache = ToolOutputCache()
    ref = cache.put(TEXT)
    assert cache.grep(ref, r"^(al|ze)", regex=True, after=1) == (
        "     1:\talpha\n     2-\tbeta one\n--\n     6:\tzeta\n     7-\teta one"
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c, r: c.read("out_9"), r"Unknown output reference 'out_9'; known references: out_1"),
        (lambda c, r: c.grep(r, "(", regex=True), r"Invalid regular expression '\('"),
        (lambda c, r: c.grep(r, ""), r"pattern is empty"),
        (lambda c, r: c.read(r, offset=99), r"has 7 lines; offset 99 is past the end"),
    ],
)
def test_lookup_errors_are_clear(call: Callable[[ToolOutputCache, str], str], message: str) -> None:
    cache = ToolOutputCache()
    ref = cache.put(TEXT)
    with pytest.raises(CacheLookupError, match=message):
        call(cache, ref)


def test_trim_history_replaces_oldest_outputs_and_keeps_them() -> None:
    calls = [ToolCall(id=f"c{i}", name="read", arguments={}) for i in range(3)]
    messages = [UserMessage(content="go"), *[ToolResult.text(c, "x" * 200) for c in calls]]
    cache = ToolOutputCache()
    assert trim_history(messages, cache, budget_chars=350) == 2
    stub0, stub1, last = messages[1], messages[2], messages[3]
    assert isinstance(stub0, ToolResult) and isinstance(stub1, ToolResult)
    assert stub0.value == (
        "[output out_1 trimmed: 1 lines, 200 chars — use tool_output_cache or tool_output_cache_grep]"
    )
    assert stub0.metadata == {STUB_KEY: "out_1"} and stub0.tool_call_id == "c0"
    assert last == ToolResult.text(calls[2], "x" * 200)
    assert cache.get("out_2") == "x" * 200
    assert trim_history(messages, cache, budget_chars=350) == 0  # stubs are never trimmed again


def test_grep_regex_matches_in_linear_time_like_the_grep_tool() -> None:
    # Python's backtracking re needs longer than anyone waits for this line; RE2 needs microseconds.
    program = (
        "from toolwire.cache import ToolOutputCache\n"
        "cache = ToolOutputCache()\n"
        "ref = cache.put('x\\n' + 'a' * 40 + '\\naaab')\n"
        "print(cache.grep(ref, 'a*' * 24 + 'b', regex=True))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "     3:\taaab\n", "")


def test_grep_regex_names_the_syntax_it_does_not_support() -> None:
    cache = ToolOutputCache()
    ref = cache.put("aa\nab")
    with pytest.raises(CacheLookupError) as caught:
        cache.grep(ref, r"(a)\1", regex=True)
    assert str(caught.value) == (
        "Invalid regular expression '(a)\\\\1': invalid escape sequence: \\1; use RE2 syntax (Python-like, "
        "without backreferences or lookaround)."
    )
    assert cache.grep(ref, "b$|^x", regex=True) == "     2:\tab"
