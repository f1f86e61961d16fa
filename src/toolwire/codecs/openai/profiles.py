"""What each OpenAI-compatible server accepts, as data the `openai` codec reads (no branch on a name)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PROFILES", "OpenAIProfile"]


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
