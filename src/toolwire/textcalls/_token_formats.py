"""Formats built from special tokens: DeepSeek V3/V3.1, Kimi K2 and gpt-oss Harmony.

Shapes (docs/tool-modes.md, text):

- DeepSeek V3 / R1-0528: `<|tool▁calls▁begin|><|tool▁call▁begin|>function<|tool▁sep|>name`
  + a ```` ```json ```` fenced object + `<|tool▁call▁end|><|tool▁calls▁end|>`; V3.1 writes
  `<|tool▁call▁begin|>name<|tool▁sep|>{...}<|tool▁call▁end|>`. The real tokens use FULLWIDTH
  VERTICAL LINE (U+FF5C) for `|`; that and the ASCII spellings (`|`, `_` for `▁`) are accepted.
- Kimi K2: `<|tool_calls_section_begin|><|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{...}`
  `<|tool_call_end|><|tool_calls_section_end|>`; the id `functions.name:0` is kept as the call id.
- gpt-oss Harmony: `<|start|>assistant<|channel|>commentary to=functions.name <|constrain|>json<|message|>{...}<|call|>`
  (the recipient may also sit before `<|channel|>`).

Sections and calls may be unclosed (a reply cut short): a call then runs to the next call or
the end of the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from toolwire.textcalls._detection import Context, Found, RawCall, rstrip_end, valid_name
from toolwire.textcalls._scan import Finder

__all__ = ["find_deepseek", "find_harmony", "find_kimi", "split_harmony_channels"]


def _deepseek_token(name: str) -> re.Pattern[str]:
    return re.compile("<[\uff5c|]" + name.replace(" ", "[\u2581_]") + "[\uff5c|]>")


_DS_SECTION = _deepseek_token("tool calls begin")
_DS_SECTION_END = _deepseek_token("tool calls end")
_DS_CALL = _deepseek_token("tool call begin")
_DS_CALL_END = _deepseek_token("tool call end")
_DS_SEP = _deepseek_token("tool sep")

_KIMI_SECTION = re.compile(re.escape("<|tool_calls_section_begin|>"))
_KIMI_SECTION_END = "<|tool_calls_section_end|>"
_KIMI_CALL = re.compile(re.escape("<|tool_call_begin|>"))
_KIMI_CALL_END = "<|tool_call_end|>"
_KIMI_ARGS = "<|tool_call_argument_begin|>"
_MAX_KIMI_ID = 200
_KIMI_ID = re.compile(r"(?:functions\.)?([\w.-]+?)(?::\d+)?", re.ASCII)

_HARMONY_RECIPIENT = re.compile(r"to=functions\.([\w.:-]{1,128})", re.ASCII)
_HARMONY_HEADER_MAX = 256  # how far a message header reaches around `to=functions.name`

_ItemParser = Callable[[Context, int, int], RawCall | None]


def _items(
    ctx: Context,
    begin: re.Pattern[str],
    end: str | re.Pattern[str],
    section_end: str | re.Pattern[str],
    parse: _ItemParser,
) -> list[Found]:
    """Each call from its begin token to its end token (or the next call, or a section end)."""
    text, found = ctx.text, []
    starts = [(m.start(), m.end()) for m in begin.finditer(text)]
    end_finder, section_finder = Finder(text, end), Finder(text, section_end)
    for i, (start, body_start) in enumerate(starts):
        limit = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        section_at, _ = section_finder.next(body_start)
        if 0 <= section_at < limit:
            limit = section_at
        end_at, end_end = end_finder.next(body_start)
        closed = 0 <= end_at < limit
        body_end = end_at if closed else rstrip_end(text, body_start, limit)
        call = parse(ctx, body_start, body_end)
        if call is not None:
            found.append(Found(start, end_end if closed else body_end, [call]))
    return found


def _sections(ctx: Context, begin: re.Pattern[str], end: str | re.Pattern[str], items: list[Found]) -> list[Found]:
    """Group calls into their sections, so the section tokens leave the text with them."""
    text, found = ctx.text, []
    starts = [(m.start(), m.end()) for m in begin.finditer(text)]
    end_finder = Finder(text, end)
    k = 0
    for i, (start, body_start) in enumerate(starts):
        limit = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        end_at, end_end = end_finder.next(body_start)
        section_stop = end_at if 0 <= end_at < limit else limit
        while k < len(items) and items[k].start < start:
            k += 1
        inside = []
        while k < len(items) and items[k].start < section_stop:
            inside.append(items[k])
            k += 1
        if inside:
            span_end = end_end if 0 <= end_at < limit else inside[-1].end
            found.append(Found(start, max(span_end, inside[-1].end), [c for item in inside for c in item.calls]))
    return found


def _strip_fence(source: str) -> str:
    source = source.strip()
    if source.startswith("```"):
        newline = source.find("\n")
        source = source[newline + 1 :] if newline >= 0 else ""
        source = source.rstrip().removesuffix("```")
    return source.strip()


def _deepseek_call(ctx: Context, start: int, end: int) -> RawCall | None:
    text = ctx.text
    sep = _DS_SEP.search(text, start, end)
    if sep is None:
        return None
    head, body = text[start : sep.start()].strip(), text[sep.end() : end]
    if head == "function":  # V3: the type, then the name on the first line of the body
        name, _, body = body.partition("\n")
        name, fmt = name.strip(), "deepseek-v3"
    else:
        name, fmt = head, "deepseek-v3.1"
    return RawCall(name, _strip_fence(body), fmt) if valid_name(name) else None


def find_deepseek(ctx: Context) -> list[Found]:
    """DeepSeek V3 / V3.1 tool-call tokens."""
    text = ctx.text
    if "tool" not in text or _DS_CALL.search(text) is None:
        return []
    items = _items(ctx, _DS_CALL, _DS_CALL_END, _DS_SECTION_END, _deepseek_call)
    return _sections(ctx, _DS_SECTION, _DS_SECTION_END, items) + items


def _kimi_call(ctx: Context, start: int, end: int) -> RawCall | None:
    text = ctx.text
    args_at = text.find(_KIMI_ARGS, start, end)
    if args_at < 0:
        return None
    native_id = text[start:args_at].strip()
    match = _KIMI_ID.fullmatch(native_id) if len(native_id) <= _MAX_KIMI_ID else None
    if match is None or not valid_name(match.group(1)):
        return None
    return RawCall(match.group(1), text[args_at + len(_KIMI_ARGS) : end].strip(), "kimi-k2", native_id)


def find_kimi(ctx: Context) -> list[Found]:
    """Kimi K2 tool-call sections; each call keeps its native id."""
    if "<|tool_call_begin|>" not in ctx.text:
        return []
    items = _items(ctx, _KIMI_CALL, _KIMI_CALL_END, _KIMI_SECTION_END, _kimi_call)
    return _sections(ctx, _KIMI_SECTION, _KIMI_SECTION_END, items) + items


def _harmony_header_start(text: str, at: int, floor: int) -> int:
    window = max(floor, at - _HARMONY_HEADER_MAX)
    for token in ("<|start|>", "<|channel|>"):
        found = text.rfind(token, window, at)
        if found >= 0:
            return found
    return at


def find_harmony(ctx: Context) -> list[Found]:
    """gpt-oss Harmony messages addressed `to=functions.name`."""
    text, found = ctx.text, []
    if "to=functions." not in text:
        return []
    recipients = list(_HARMONY_RECIPIENT.finditer(text))
    call_finder, start_finder = Finder(text, "<|call|>"), Finder(text, "<|start|>")
    resume = 0
    for i, recipient in enumerate(recipients):
        if recipient.start() < resume:
            continue
        message = text.find("<|message|>", recipient.end(), recipient.end() + _HARMONY_HEADER_MAX)
        if message < 0:
            continue
        body_start = message + len("<|message|>")
        limit = recipients[i + 1].start() if i + 1 < len(recipients) else len(text)
        next_start, _ = start_finder.next(body_start)
        if 0 <= next_start < limit:
            limit = next_start
        call_at, call_end = call_finder.next(body_start)
        closed = 0 <= call_at < limit
        body_end = call_at if closed else rstrip_end(text, body_start, limit)
        start = _harmony_header_start(text, recipient.start(), resume)
        resume = call_end if closed else body_end
        call = RawCall(recipient.group(1), text[body_start:body_end].strip(), "harmony")
        found.append(Found(start, resume, [call]))
    return found


_HARMONY_MESSAGE = re.compile(
    r"(?:<\|start\|>[^<]*)?<\|channel\|>(\w+)[^<]*?(?:<\|constrain\|>[^<]*)?<\|message\|>(.*?)"
    r"(?:<\|end\|>|<\|return\|>|<\|call\|>|(?=<\|start\|>)|\Z)",
    re.DOTALL,
)


def split_harmony_channels(text: str) -> tuple[str, str] | None:
    """gpt-oss Harmony text as `(reasoning, answer)`, or None when the text is not Harmony.

    `analysis` is the model's reasoning (never shown as the answer); `final` is the answer;
    `commentary` without a recipient is a visible preamble. Calls (`to=functions.x`) were taken
    out by the parser before this runs.
    """
    if "<|channel|>" not in text:
        return None
    reasoning: list[str] = []
    answer: list[str] = []
    end = 0
    for match in _HARMONY_MESSAGE.finditer(text):
        answer.append(text[end : match.start()].strip())
        channel, content = match.group(1), match.group(2).strip()
        (reasoning if channel == "analysis" else answer).append(content)
        end = match.end()
    answer.append(text[end:].strip())
    return "\n".join(r for r in reasoning if r), "\n".join(a for a in answer if a)
