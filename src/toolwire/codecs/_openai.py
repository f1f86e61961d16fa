"""The `openai` codec: OpenAI Chat Completions (`POST /v1/chat/completions`) and the servers that copy it.

Targets the API as typed by openai-python 3.x (`types/chat/completion_create_params.py`). The
same codec serves vLLM, llama.cpp's `llama-server`, LM Studio and Ollama's OpenAI-compatible
endpoint; what they accept differently is data (`OpenAIProfile`, one per server in `PROFILES`),
never a branch on a server's name. This module owns the request body; the history lives in
`_openai_messages`, replies and streams in `_openai_replies`. It imports only the neutral types,
`toolwire.schema` and its own family of codec modules.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, assert_never

from toolwire.codecs._openai_messages import NAME, decode_messages, encode_messages
from toolwire.codecs._openai_replies import OpenAIStreamDecoder, decode_response, encode_response
from toolwire.codecs._shared import require_dict, stop_list, warn_once
from toolwire.errors import CodecError
from toolwire.types import NamedToolChoice, Request, Response, ToolChoice, ToolDefinition

if TYPE_CHECKING:
    from toolwire.codecs import StreamEncoder

__all__ = ["CODEC", "PROFILES", "OpenAICodec", "OpenAIProfile"]

logger = logging.getLogger(__name__)
_warned: set[str] = set()  # request decoding warnings (encoding ones are per codec instance)

# tables


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenAIProfile:
    """What one OpenAI-compatible server accepts, as flags the codec reads.

    Attributes:
        name: The provider name this profile describes (`connect("<name>:model")`).
        named_tool_choice: Whether `tool_choice` may name a function. Without it a named
            choice is sent as only that tool with `"required"`.
        strict_tools: Whether `function.strict` is accepted. Without it `strict` is dropped.
        parallel_tool_calls_default: Sent as `parallel_tool_calls` when tools are present and
            the request leaves it unset (llama.cpp defaults to false).
        max_tokens_field: The request field that caps the reply length.
        reasoning_field: Where this codec's own reasoning goes back when its original field
            name is unknown; `None` drops it.
        max_call_id_length: Longer call ids are shortened (deterministically) when sent.
    """

    name: str
    named_tool_choice: bool = True
    strict_tools: bool = True
    parallel_tool_calls_default: bool | None = None
    max_tokens_field: str = "max_completion_tokens"
    reasoning_field: str | None = None
    max_call_id_length: int | None = None


PROFILES: dict[str, OpenAIProfile] = {
    # max_tokens is deprecated and rejected by reasoning models (completion_create_params.py).
    # Ids over 40 characters are rejected: "string_above_max_length" (vercel/ai #5171).
    "openai": OpenAIProfile(name="openai", max_call_id_length=40),
    # vLLM renamed reasoning_content to reasoning and drops the old name on input (#27752, #38488).
    "vllm": OpenAIProfile(name="vllm", max_tokens_field="max_tokens", reasoning_field="reasoning"),
    # llama-server reads tool_choice as a string only and defaults parallel calls to off
    # (docs/function-calling.md, common_chat_tool_choice_parse_oaicompat).
    "llamacpp": OpenAIProfile(
        name="llamacpp",
        named_tool_choice=False,
        parallel_tool_calls_default=True,
        max_tokens_field="max_tokens",
        reasoning_field="reasoning_content",
    ),
    # Unknown servers: some reject `strict` outright (xAI, pydantic-ai #1846).
    "openai-compatible": OpenAIProfile(
        name="openai-compatible",
        strict_tools=False,
        max_tokens_field="max_tokens",
        reasoning_field="reasoning_content",
    ),
}

_CHOICES: tuple[Literal["auto", "none", "required"], ...] = ("auto", "none", "required")
_MAX_TOKENS_FIELDS = ("max_completion_tokens", "max_tokens")
_STREAM_OPTIONS = {"include_usage": True}  # SPEC §2: streams always ask for usage


class OpenAICodec:
    """Chat Completions, shaped by one server's `OpenAIProfile`.

    Each instance warns once about each feature its server lacks.
    """

    name = NAME

    def __init__(self, profile: OpenAIProfile = PROFILES["openai"]) -> None:
        self.profile = profile
        self._warned: set[str] = set()

    # encode

    def encode_request(self, request: Request) -> dict[str, Any]:
        """Return the exact JSON body for `request`."""
        body: dict[str, Any] = {
            "model": request.model,
            "messages": encode_messages(
                request.messages, self.profile.reasoning_field, self.profile.max_call_id_length
            ),
        }
        tools, choice = self._encode_tools(request.tools, request.tool_choice)
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
            body["stream_options"] = dict(_STREAM_OPTIONS)
        body.update(extra)
        return body

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
            return [self._encode_tool(t) for t in tools if t.name == choice.name], "required"
        return [self._encode_tool(t) for t in tools], _encode_tool_choice(choice)

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
            from toolwire.schema import openai_strict_schema  # the schema layer loads on first strict tool

            parameters = openai_strict_schema(parameters)
        if parameters is not None:
            function["parameters"] = parameters
        if strict is not None:
            function["strict"] = strict
        return {"type": "function", "function": function}

    # decode

    def decode_request(self, body: dict[str, Any]) -> Request:
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
            stream=stream,
            extra=rest,
        )

    def decode_response(self, body: dict[str, Any]) -> Response:
        """Read a `chat.completion` body; an error body raises `ProviderError`."""
        return decode_response(body)

    def stream_decoder(self) -> OpenAIStreamDecoder:
        """Return a fresh decoder for one `chat.completion.chunk` stream."""
        return OpenAIStreamDecoder()

    # render

    def encode_response(self, response: Response) -> dict[str, Any]:
        """Render a reply as a `chat.completion` body."""
        return encode_response(response)

    def stream_encoder(self, model: str | None = None, response_id: str | None = None) -> StreamEncoder:
        """A fresh encoder turning neutral stream events into `chat.completion.chunk`s as they come."""
        from toolwire.codecs._openai_encoder import OpenAIStreamEncoder

        return OpenAIStreamEncoder(model, response_id)

    def encode_stream(self, response: Response) -> list[dict[str, Any]]:
        """Render a reply as `chat.completion.chunk` objects (without the `[DONE]` marker)."""
        from toolwire.codecs._openai_encoder import OpenAIStreamEncoder
        from toolwire.codecs._stream_encoding import replay

        return replay(OpenAIStreamEncoder(reply=response), response)


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
    if isinstance(wire, dict) and wire.get("type") == "function" and isinstance(wire.get("function"), dict):
        name = wire["function"].get("name")
        return NamedToolChoice(name) if isinstance(name, str) else None
    return None


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


CODEC = OpenAICodec()
