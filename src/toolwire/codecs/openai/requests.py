"""Chat Completions request bodies, both ways, shaped by one server's `OpenAIProfile`.

Targets the API as typed by openai-python 3.x (`types/chat/completion_create_params.py`). The
history inside the body is `messages.py`'s; what servers accept differently is data
(`profiles.py`), never a branch on a server's name.
"""

from __future__ import annotations

import logging
from typing import Any, Literal, assert_never

from toolwire.codecs.common.checks import sendable_schema
from toolwire.codecs.common.degradations import warn_once
from toolwire.codecs.common.wire import require_dict, stop_list
from toolwire.codecs.openai.call_ids import CallIds
from toolwire.codecs.openai.messages import NAME, decode_messages, encode_messages
from toolwire.codecs.openai.profiles import OpenAIProfile
from toolwire.errors import CodecError
from toolwire.schema import openai_strict_format
from toolwire.types import NamedToolChoice, Request, ResponseFormat, ToolChoice, ToolDefinition

__all__ = ["ChatRequests", "encode_response_format"]

logger = logging.getLogger("toolwire.codecs.openai")
_warned: set[str] = set()  # request decoding warnings (encoding ones are per codec instance)

_CHOICES: tuple[Literal["auto", "none", "required"], ...] = ("auto", "none", "required")
_MAX_TOKENS_FIELDS = ("max_completion_tokens", "max_tokens")
_STREAM_OPTIONS = {"include_usage": True}  # streams always ask for usage (docs/wire-formats.md)


class ChatRequests:
    """Request bodies for one server: each instance warns once about each feature its server lacks."""

    def __init__(self, profile: OpenAIProfile) -> None:
        self.profile = profile
        self.call_ids = CallIds(profile.call_id_form, profile.max_call_id_length)
        self._warned: set[str] = set()

    def encode(self, request: Request) -> dict[str, Any]:
        """Return the exact JSON body for `request`."""
        body: dict[str, Any] = {"model": request.model, "messages": self._encode_messages(request)}
        self._check_choice(request)
        tools, choice = self._encode_tools(request.tools, self.tool_choice(request))
        if tools:
            body["tools"] = tools
        if choice is not None:
            body["tool_choice"] = choice
        parallel = request.parallel_tool_calls
        if parallel is None and tools:
            parallel = self.profile.parallel_tool_calls_default
        if parallel is not None:
            body["parallel_tool_calls"] = parallel
        extra = self._encode_options(request, body)
        if request.stream:
            body["stream"] = True
            if self.profile.stream_options:
                body["stream_options"] = dict(_STREAM_OPTIONS)
        body.update(extra)
        return body

    def _encode_messages(self, request: Request) -> list[dict[str, Any]]:
        profile = self.profile
        messages = encode_messages(
            request.messages,
            profile.reasoning_field,
            self.call_ids.wire,
            foreign_reasoning=profile.reasoning_with_calls,
        )
        if profile.empty_call_content is not None:
            _fill_empty_call_content(messages, profile.empty_call_content)
        if profile.reasoning_with_calls and profile.reasoning_field is not None:
            _reasoning_beside_calls(messages, profile.reasoning_field)
        if not profile.user_after_tool:
            messages = _bridge_tool_to_user(messages, profile.bridge_text)
        return messages

    def tool_choice(self, request: Request) -> ToolChoice | None:
        """The choice sent: the request's own, or the profile's default when tools go without one."""
        if request.tool_choice is None and request.tools:
            return self.profile.default_tool_choice
        return request.tool_choice

    def unstreamable(self, request: Request) -> str | None:
        """Why this server cannot stream `request` (the client then asks unstreamed), or `None`."""
        choice = self.tool_choice(request)
        if self.profile.streamed_tool_choices == "all" or not request.tools:
            return None
        if isinstance(choice, NamedToolChoice) or choice == "none":
            return None
        return (
            f"the {self.profile.name} server streams tool calls only for a named tool_choice, "
            f"not {choice!r} (profile flag streamed_tool_choices='named')"
        )

    def _check_choice(self, request: Request) -> None:
        """Refuse, before sending, a choice this server fails on in a way no retry fixes."""
        if not request.tools:
            return
        choice, name = self.tool_choice(request), self.profile.name
        if choice == "required" and not self.profile.required_tool_choice:
            raise CodecError(
                f"The {name} server cannot take tool_choice 'required' (profile flag required_tool_choice); "
                "name the tool to call (tool_choice='<tool name>') or send 'auto'.",
                provider=name,
            )
        if choice in ("auto", None) and not self.profile.auto_tool_choice:
            raise CodecError(
                f"The {name} server cannot choose among tools by itself (tool_choice {choice!r}; profile flag "
                "auto_tool_choice): name the tool to call, use tool mode 'text', or start vLLM with "
                "--enable-auto-tool-choice --tool-call-parser <parser> and connect as 'vllm'.",
                provider=name,
            )

    def _encode_options(self, request: Request, body: dict[str, Any]) -> dict[str, Any]:
        """Put the sampling options in `body`; return the `extra` still to merge."""
        extra = request.extra
        if request.max_tokens is not None:
            # The field the caller wrote (kept in extra by decode_request) when it still holds the value.
            field = next((f for f in _MAX_TOKENS_FIELDS if extra.get(f) == request.max_tokens), None)
            body[field or self.profile.max_tokens_field] = request.max_tokens
        if any(f in extra for f in _MAX_TOKENS_FIELDS):
            extra = {k: v for k, v in extra.items() if k not in _MAX_TOKENS_FIELDS}  # the neutral value decides
        for option in ("temperature", "top_p", "stop", "seed", "user"):
            if (value := getattr(request, option)) is not None:
                body[option] = value
        if request.response_format is not None:
            body["response_format"] = encode_response_format(request.response_format, self.profile.schema_form)
            body.update(self.profile.schema_sampling)
        return extra

    def _encode_tools(
        self, tools: list[ToolDefinition], choice: ToolChoice | None
    ) -> tuple[list[dict[str, Any]], str | dict[str, Any] | None]:
        if isinstance(choice, NamedToolChoice) and not self.profile.named_tool_choice:
            warn_once(
                logger,
                self._warned,
                "named_tool_choice",
                f"The {self.profile.name} server cannot force a named tool; toolwire sends only tool "
                f"{choice.name!r} with tool_choice 'required' instead.",
            )
            return [self._encode_tool(t) for t in tools if t.name == choice.name], self.profile.required_word
        wire_choice = _encode_tool_choice(choice)
        if wire_choice == "required":
            wire_choice = self.profile.required_word
        return [self._encode_tool(t) for t in tools], wire_choice

    def _encode_tool(self, tool: ToolDefinition) -> dict[str, Any]:
        function: dict[str, Any] = {"name": tool.name}
        if tool.description is not None:
            function["description"] = tool.description
        strict = tool.strict
        if strict is not None and not self.profile.strict_tools:
            if strict:
                warn_once(
                    logger,
                    self._warned,
                    "strict_tools",
                    f"The {self.profile.name} server does not accept strict tools; toolwire sends "
                    f"tool {tool.name!r} and any other strict tool without 'strict'.",
                )
            strict = None
        parameters = tool.parameters
        if strict:
            from toolwire.schema import (  # the schema layer loads on first strict tool
                openai_strict_schema,
            )

            parameters = sendable_schema(NAME, tool, openai_strict_schema)
        if parameters is not None:
            function["parameters"] = parameters
        if strict is not None:
            function["strict"] = strict
        return {"type": "function", "function": function}

    def decode(self, body: dict[str, Any]) -> Request:
        """Read a request body back; keys toolwire does not model go to `Request.extra`."""
        rest = dict(require_dict(body, NAME, "request body"))
        model = rest.pop("model", None)
        if not isinstance(model, str):
            raise CodecError(f"The openai request needs a str 'model', got {model!r}.", provider=NAME)
        messages = decode_messages(rest.pop("messages", None))
        wire_tools = rest.pop("tools", None) or []
        tools = [t for t in map(_decode_tool, wire_tools) if t is not None]
        if len(tools) != len(wire_tools):
            rest["tools"] = wire_tools  # custom tools: the list goes back as it is to OpenAI (extra)
        choice = _decode_tool_choice(rest.get("tool_choice"))
        if choice is not None:
            del rest["tool_choice"]  # an unmodelled choice (allowed_tools, custom) stays in extra
        written = next((f for f in (self.profile.max_tokens_field, *_MAX_TOKENS_FIELDS) if f in rest), None)
        max_tokens = rest.pop(written) if written is not None else None
        if written is not None and written != self.profile.max_tokens_field:
            rest[written] = max_tokens  # re-encoding for this codec writes the caller's field again
        stream = rest.pop("stream", False) is True
        if stream and rest.get("stream_options") == _STREAM_OPTIONS:
            del rest["stream_options"]
        return Request(
            model=model,
            messages=messages,
            tools=tools,
            tool_choice=choice,
            parallel_tool_calls=rest.pop("parallel_tool_calls", None),
            max_tokens=max_tokens,
            temperature=rest.pop("temperature", None),
            top_p=rest.pop("top_p", None),
            stop=stop_list(rest.pop("stop", None)),
            seed=rest.pop("seed", None),
            user=rest.pop("user", None),
            response_format=_decode_response_format(rest),
            stream=stream,
            extra=rest,
        )


def _fill_empty_call_content(messages: list[dict[str, Any]], content: str) -> None:
    for message in messages:
        if message.get("role") == "assistant" and message.get("content") is None:
            message["content"] = content


def _reasoning_beside_calls(messages: list[dict[str, Any]], field: str) -> None:
    for message in messages:
        if message.get("role") == "assistant" and message.get("tool_calls") and field not in message:
            message[field] = ""


def _bridge_tool_to_user(messages: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """An assistant turn between a tool result and a user message, for servers that refuse that order."""
    bridged: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") == "user" and bridged and bridged[-1].get("role") == "tool":
            bridged.append({"role": "assistant", "content": text})
        bridged.append(message)
    return bridged


def _encode_tool_choice(choice: ToolChoice | None) -> str | dict[str, Any] | None:
    match choice:
        case None:
            return None
        case NamedToolChoice(name=name):
            return {"type": "function", "function": {"name": name}}
        case "auto" | "none" | "required":
            return choice
        case _:
            assert_never(choice)


def _decode_tool_choice(wire: Any) -> ToolChoice | None:
    for choice in _CHOICES:
        if wire == choice:
            return choice
    if wire == "any":  # Mistral's word for required
        return "required"
    if isinstance(wire, dict) and wire.get("type") == "function" and isinstance(wire.get("function"), dict):
        name = wire["function"].get("name")
        return NamedToolChoice(name) if isinstance(name, str) else None
    return None


def encode_response_format(
    wanted: ResponseFormat, form: Literal["json_schema", "json_object"] = "json_schema", *, strict_form: bool = True
) -> dict[str, Any]:
    """`response_format`: `json_object`, or `json_schema` with a name (required) and the schema.

    `form="json_object"` sends a schema as `{"type": "json_object", "schema": ...}` instead
    (llama-cpp-python's server, which refuses `json_schema`). A strict schema goes in OpenAI's
    strict form, as strict tools' parameters do (every property required, no extra ones).
    """
    if wanted.schema is None:
        return {"type": "json_object"}
    if form == "json_object":
        return {"type": "json_object", "schema": wanted.schema}
    schema = openai_strict_format(wanted.schema) if wanted.strict and strict_form else wanted.schema
    spec: dict[str, Any] = {"name": wanted.name or "response", "schema": schema}
    if wanted.strict is not None:
        spec["strict"] = wanted.strict
    return {"type": "json_schema", "json_schema": spec}


def _decode_response_format(rest: dict[str, Any]) -> ResponseFormat | None:
    """The JSON output a body asks for; a form the neutral one cannot hold stays in `rest` too."""
    wire = rest.pop("response_format", None)
    found: ResponseFormat | None = None
    if isinstance(wire, dict) and wire.get("type") == "json_object":
        found = ResponseFormat()
    elif isinstance(wire, dict) and wire.get("type") == "json_schema" and isinstance(wire.get("json_schema"), dict):
        spec = wire["json_schema"]
        schema = spec.get("schema") if isinstance(spec.get("schema"), dict) else {}
        found = ResponseFormat(schema=schema, name=spec.get("name"), strict=spec.get("strict"))
    if wire is not None and (found is None or encode_response_format(found, strict_form=False) != wire):
        rest["response_format"] = wire  # `text`, a description: back as written to this codec
    return found


def _decode_tool(wire: Any) -> ToolDefinition | None:
    wire = require_dict(wire, NAME, "tool")
    function = wire.get("function")
    if isinstance(wire.get("type"), str) and wire["type"] != "function":
        # `custom` tools (free-form input, GPT-5) and kinds added later have no neutral form.
        kind = wire.get("type")
        message = f"openai: skipped tool of type {kind!r}; it has no neutral form (kept for OpenAI only)."
        warn_once(logger, _warned, f"{NAME}:{kind}", message)
        return None
    if wire.get("type") != "function" or not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise CodecError(
            f"The openai codec reads function tools only, got {wire!r}; pass other tool kinds through Request.extra.",
            provider=NAME,
        )
    return ToolDefinition(
        name=function["name"],  # its pattern is checked by ToolDefinition
        description=function.get("description"),
        parameters=function.get("parameters"),
        strict=function.get("strict"),
    )
