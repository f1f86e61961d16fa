"""The shape of each wire format's bodies, as far as the decoders read them: types by path.

Used only to explain a failure: when decoding raises or yields a value of the wrong type,
`find_bad_field` walks the body against its shape and names the first field that does not fit
(`choices[0].message.tool_calls`), so the `CodecError` says where to look. A shape is a type
(or tuple of types) for a leaf, a dict for an object (unknown keys are fine: providers add
fields), a one-item list for an array of that shape. `null` fits everywhere: decoders treat it
as absent. Tool arguments are `object`: any value is read by `parse_arguments`, which tells the
model what was wrong instead of failing the whole reply.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["SHAPES", "find_bad_field"]

Shape = Any
_NUMBER = (int, float)

_OPENAI_CALL = {"id": str, "type": str, "index": int, "function": {"name": str, "arguments": object}}
_OPENAI_MESSAGE = {
    "role": str,
    "content": (str, list),
    "reasoning_content": str,
    "reasoning": str,
    "refusal": str,
    "tool_calls": [_OPENAI_CALL],
}
_OPENAI_USAGE = {
    "prompt_tokens": int,
    "completion_tokens": int,
    "total_tokens": int,
    "prompt_tokens_details": {"cached_tokens": int},
    "completion_tokens_details": {"reasoning_tokens": int},
}
_OPENAI = {
    "response": {
        "id": str,
        "model": str,
        "choices": [{"index": int, "finish_reason": str, "message": _OPENAI_MESSAGE}],
        "usage": _OPENAI_USAGE,
    },
    "event": {
        "id": str,
        "model": str,
        "choices": [{"index": int, "finish_reason": str, "delta": _OPENAI_MESSAGE}],
        "usage": _OPENAI_USAGE,
        "error": (dict, str),
    },
    "request": {
        "model": str,
        "messages": [{"role": str, "content": (str, list), "tool_call_id": str, "tool_calls": [_OPENAI_CALL]}],
        "tools": [{"type": str, "function": {"name": str, "description": str, "parameters": dict}}],
        "tool_choice": (str, dict),
        "max_tokens": int,
        "max_completion_tokens": int,
        "temperature": _NUMBER,
        "top_p": _NUMBER,
        "stop": (str, list),
        "seed": int,
        "user": str,
        "stream": bool,
        "parallel_tool_calls": bool,
    },
}

_ANTHROPIC_BLOCK = {
    "type": str,
    "text": str,
    "id": str,
    "name": str,
    "input": object,
    "thinking": str,
    "signature": str,
    "data": str,
    "tool_use_id": str,
    "content": (str, list),
    "is_error": bool,
}
_ANTHROPIC_USAGE = {
    "input_tokens": int,
    "output_tokens": int,
    "cache_read_input_tokens": int,
    "cache_creation_input_tokens": int,
}
_ANTHROPIC_MESSAGE = {
    "id": str,
    "model": str,
    "role": str,
    "stop_reason": str,
    "content": [_ANTHROPIC_BLOCK],
    "usage": _ANTHROPIC_USAGE,
}
_ANTHROPIC = {
    "response": _ANTHROPIC_MESSAGE,
    "event": {
        "type": str,
        "index": int,
        "message": _ANTHROPIC_MESSAGE,
        "content_block": _ANTHROPIC_BLOCK,
        "delta": {
            "type": str,
            "text": str,
            "partial_json": str,
            "thinking": str,
            "signature": str,
            "stop_reason": str,
        },
        "usage": _ANTHROPIC_USAGE,
        "error": dict,
    },
    "request": {
        "model": str,
        "system": (str, list),
        "messages": [{"role": str, "content": (str, [_ANTHROPIC_BLOCK])}],
        "tools": [{"name": str, "description": str, "input_schema": dict}],
        "tool_choice": dict,
        "max_tokens": int,
        "temperature": _NUMBER,
        "top_p": _NUMBER,
        "stop_sequences": [str],
        "metadata": {"user_id": str},
        "stream": bool,
    },
}

_GEMINI_PART = {
    "text": str,
    "thought": bool,
    "thoughtSignature": str,
    "functionCall": {"name": str, "args": object, "id": str},
    "functionResponse": {"name": str, "response": dict, "id": str},
    "inlineData": {"mimeType": str, "data": str},
}
_GEMINI_RESPONSE = {
    "candidates": [{"index": int, "finishReason": str, "content": {"role": str, "parts": [_GEMINI_PART]}}],
    "usageMetadata": {
        "promptTokenCount": int,
        "candidatesTokenCount": int,
        "thoughtsTokenCount": int,
        "cachedContentTokenCount": int,
        "totalTokenCount": int,
    },
    "modelVersion": str,
    "responseId": str,
}
_GEMINI = {
    "response": _GEMINI_RESPONSE,
    "event": _GEMINI_RESPONSE,
    "request": {
        "contents": [{"role": str, "parts": [_GEMINI_PART]}],
        "systemInstruction": {"parts": [_GEMINI_PART]},
        "tools": [{"functionDeclarations": [{"name": str, "description": str, "parameters": dict}]}],
        "toolConfig": dict,
        "generationConfig": {
            "maxOutputTokens": int,
            "temperature": _NUMBER,
            "topP": _NUMBER,
            "seed": int,
            "stopSequences": [str],
        },
    },
}

_OLLAMA_MESSAGE = {
    "role": str,
    "content": str,
    "thinking": str,
    "images": [str],
    "tool_name": str,
    "tool_calls": [{"id": str, "function": {"name": str, "arguments": object, "index": int}}],
}
_OLLAMA_RESPONSE = {
    "model": str,
    "message": _OLLAMA_MESSAGE,
    "done": bool,
    "done_reason": str,
    "prompt_eval_count": int,
    "eval_count": int,
    "error": str,
}
_OLLAMA = {
    "response": _OLLAMA_RESPONSE,
    "event": _OLLAMA_RESPONSE,
    "request": {
        "model": str,
        "messages": [_OLLAMA_MESSAGE],
        "tools": [{"type": str, "function": {"name": str, "description": str, "parameters": dict}}],
        "options": dict,
        "stream": bool,
        "think": (bool, str),
    },
}

_RESPONSES_ITEM = {
    "type": str,
    "id": str,
    "call_id": str,
    "name": str,
    "arguments": object,
    "role": str,
    "status": str,
    "content": [{"type": str, "text": str}],
    "summary": [{"type": str, "text": str}],
    "encrypted_content": str,
}
_RESPONSES_CONTENT = [{"type": str, "text": str, "image_url": str}]
_RESPONSES_INPUT_ITEM = {
    "type": str,
    "id": str,
    "call_id": str,
    "name": str,
    "namespace": str,
    "arguments": object,
    "role": str,
    "status": str,
    "content": (str, _RESPONSES_CONTENT),
    "output": (str, _RESPONSES_CONTENT),
    "summary": [{"type": str, "text": str}],
    "encrypted_content": str,
}
_RESPONSES_RESPONSE = {
    "id": str,
    "model": str,
    "status": str,
    "output": [_RESPONSES_ITEM],
    "usage": {
        "input_tokens": int,
        "output_tokens": int,
        "input_tokens_details": {"cached_tokens": int},
        "output_tokens_details": {"reasoning_tokens": int},
    },
    "incomplete_details": {"reason": str},
    "error": dict,
}
_RESPONSES = {
    "response": _RESPONSES_RESPONSE,
    "event": {
        "type": str,
        "sequence_number": int,
        "output_index": int,
        "content_index": int,
        "summary_index": int,
        "item_id": str,
        "delta": str,
        "text": str,
        "arguments": object,
        "name": str,
        "item": _RESPONSES_ITEM,
        "response": _RESPONSES_RESPONSE,
    },
    "request": {
        "model": str,
        "instructions": str,
        "input": (str, [_RESPONSES_INPUT_ITEM]),
        "tools": [{"type": str, "name": str, "description": str, "parameters": dict}],
        "tool_choice": (str, dict),
        "max_output_tokens": int,
        "temperature": _NUMBER,
        "top_p": _NUMBER,
        "user": str,
        "stream": bool,
    },
}

SHAPES: dict[str, dict[str, Shape]] = {
    "openai": _OPENAI,
    "anthropic": _ANTHROPIC,
    "gemini": _GEMINI,
    "ollama": _OLLAMA,
    "openai-responses": _RESPONSES,
}


def find_bad_field(value: Any, shape: Shape, path: str = "") -> tuple[str, str] | None:
    """The first `(path, expected)` where `value` does not fit `shape`, or None when it all fits."""
    fits = _CHECKS.get(id(shape))
    if fits is not None and fits(value):  # nearly every body: checked without the walk's bookkeeping
        return None
    return _first_bad(value, shape, path)


def _first_bad(value: Any, shape: Shape, path: str) -> tuple[str, str] | None:
    # Each entry's place is (parent place, key or index), spelled out only for the field that fails:
    # a body that fits, which is nearly every body, builds no path strings.
    stack: list[tuple[Any, Shape, Any]] = [(value, shape, None)]
    while stack:
        current, expected, place = stack.pop()
        if current is None:
            continue
        if isinstance(expected, dict):
            if not isinstance(current, dict):
                return _spell(path, place) or "(the body)", "an object"
            stack.extend((current[k], s, (place, k)) for k, s in expected.items() if k in current)
        elif isinstance(expected, list):
            if not isinstance(current, list):
                return _spell(path, place) or "(the body)", "an array"
            item_shape = expected[0]
            stack.extend((current[i], item_shape, (place, i)) for i in range(len(current) - 1, -1, -1))
        elif not _fits(current, expected):
            return _spell(path, place), _describe(expected)
        elif isinstance(expected, tuple) and isinstance(current, list):
            # `(str, [block])`: a list is read as that array of blocks, so its items are checked too
            stack.extend((current, option, place) for option in expected if isinstance(option, list))
    return None


def _spell(path: str, place: Any) -> str:
    """`messages[2].content` from the chain of (parent, key or index) pairs under `path`."""
    steps: list[str | int] = []
    while place is not None:
        place, step = place
        steps.append(step)
    for step in reversed(steps):
        path = f"{path}[{step}]" if isinstance(step, int) else f"{path}.{step}" if path else step
    return path


def _fits(value: Any, expected: type | tuple[Any, ...]) -> bool:
    options = expected if isinstance(expected, tuple) else (expected,)
    for option in options:
        if isinstance(option, list):
            if isinstance(value, list):
                return True
        elif isinstance(value, option) and not (isinstance(value, bool) and option is not bool):
            return True
    return False


def _describe(expected: type | tuple[Any, ...]) -> str:
    options = expected if isinstance(expected, tuple) else (expected,)
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "a boolean",
        dict: "an object",
        list: "an array",
    }
    return " or ".join(names.get(o, "an array") if not isinstance(o, list) else "an array" for o in options)


def _compile(shape: Shape) -> Callable[[Any], bool]:
    """Whether a value fits `shape`, as `find_bad_field` decides it, as one closure per shape node.

    A third of decoding a request went to walking its body against the shape node by node; the
    closures check the same rules with the dispatch on the shape done once, at import.
    """
    if isinstance(shape, dict):
        fields = {key: _compile(item) for key, item in shape.items()}

        def fits_object(value: Any) -> bool:
            if value is None:
                return True
            if not isinstance(value, dict):
                return False
            return all(check(value[key]) for key, check in fields.items() if key in value)

        return fits_object
    if isinstance(shape, list):
        fits_item = _compile(shape[0])
        return lambda value: value is None or (isinstance(value, list) and all(map(fits_item, value)))
    options = shape if isinstance(shape, tuple) else (shape,)
    arrays = [_compile(option) for option in options if isinstance(option, list)]
    types = tuple(option for option in options if not isinstance(option, list))
    takes_bool = bool in types

    def fits_leaf(value: Any) -> bool:
        if value is None:
            return True
        if isinstance(value, bool):
            return takes_bool
        if isinstance(value, list) and arrays:
            return all(fits_array(value) for fits_array in arrays)
        return isinstance(value, types)

    return fits_leaf


_CHECKS = {id(shape): _compile(shape) for kinds in SHAPES.values() for shape in kinds.values()}
