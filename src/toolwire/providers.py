"""What toolwire knows about reaching each provider, held as data: codec, URLs, auth, stream end.

`connect("name:model")` looks a provider up here; quirks of OpenAI-compatible servers are
capability flags in the codec's profiles (`profile`), never `if` chains. Imports only the
http package's `Framing` type and the standard library.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from toolwire.http import Framing

__all__ = ["PROVIDERS", "Provider"]


def _openai_finished(event: dict[str, Any]) -> bool:
    # Compatible servers sometimes omit `[DONE]`; a finish_reason ends the reply just as well.
    choices = event.get("choices")
    return isinstance(choices, list) and any(isinstance(c, dict) and c.get("finish_reason") for c in choices)


def _bedrock_finished(event: dict[str, Any]) -> bool:
    # ConverseStream's reply ends at messageStop; the metadata event (usage) follows it.
    return "messageStop" in event


def _gemini_finished(event: dict[str, Any]) -> bool:
    # Gemini ends an SSE stream by closing it; the last chunk carries finishReason (or a blocked prompt).
    candidates = event.get("candidates")
    if isinstance(candidates, list) and any(isinstance(c, dict) and c.get("finishReason") for c in candidates):
        return True
    feedback = event.get("promptFeedback")
    return isinstance(feedback, dict) and bool(feedback.get("blockReason"))


@dataclass(frozen=True, slots=True)
class Provider:
    """Everything toolwire knows about reaching one provider, as data.

    Attributes:
        name: The provider name used in `connect("name:model")`.
        codec: The wire format (a `toolwire.codecs` name).
        base_url: Default base URL (a template over the options); `None` means `base_url` is required.
        path: Path of a non-streaming call, a template over `model` and the options.
        stream_path: Path of a streaming call.
        auth: How the key travels: `bearer`, `x-api-key`, `x-goog-api-key` or `none`; `aws`: a
            bearer key when there is one, else AWS SigV4 signing (`aws_*` options).
        key_env: Environment variables holding the key, first found wins.
        key_required: Whether `connect` refuses to build a client without a key.
        headers: Fixed headers the provider requires.
        framing: `sse`, `ndjson` or `eventstream` (AWS) for streams.
        stream_end: Tells whether an event ends the stream, for formats whose decoder does not emit
            `Done` itself; `None` when the decoder does.
        profile: The OpenAI-compatible server profile (capability flags) for the `openai` codec.
        options: Extra `connect` options this provider reads, with their environment variables
            and defaults (`None` = required).
        version_segment: The API version the provider's official SDK adds to the base URL it is
            given (`/v1` for Anthropic): added to a base URL that names no version of its own, so
            the SDK's form (`http://127.0.0.1:4000`) and the full one (`.../v1`) both work.
        quote_model: Whether the model goes into the path percent-encoded, `:` and `/` included
            (Bedrock model ids, inference profiles and ARNs).
    """

    name: str
    codec: str
    base_url: str | None
    path: str
    stream_path: str
    auth: Literal["bearer", "x-api-key", "x-goog-api-key", "aws", "none"]
    key_env: tuple[str, ...] = ()
    key_required: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)
    framing: Framing = "sse"
    stream_end: Callable[[dict[str, Any]], bool] | None = None
    profile: str | None = None
    options: Mapping[str, tuple[tuple[str, ...], str | None]] = field(default_factory=dict)
    version_segment: str = ""
    quote_model: bool = False

    def address_hint(self) -> str:
        """What a base URL for this provider looks like, for a 404 that says nothing is served there."""
        if self.codec == "openai":
            return "OpenAI-compatible servers usually end in /v1, e.g. http://localhost:8000/v1"
        example = (self.base_url or "").format(
            location_host="us-central1-aiplatform.googleapis.com", region="us-east-1"
        )
        if self.version_segment:
            example = example.removesuffix(self.version_segment)
        added = self.version_segment + self.path.split("{", 1)[0]
        return f"give the server's root as {self.name}'s SDK takes it, e.g. {example}; toolwire adds {added}..."


def _openai_like(name: str, base_url: str | None, key_env: tuple[str, ...] = (), required: bool = False) -> Provider:
    return Provider(
        name=name,
        codec="openai",
        base_url=base_url,
        path="/chat/completions",
        stream_path="/chat/completions",
        auth="bearer",
        key_env=key_env,
        key_required=required,
        stream_end=_openai_finished,
        profile=name,
    )


_GEMINI_MODEL = "/models/{model}:generateContent"
_GEMINI_STREAM = "/models/{model}:streamGenerateContent?alt=sse"
_VERTEX_MODEL = "/projects/{project}/locations/{location}/publishers/google/models/{model}"

PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        _openai_like("openai", "https://api.openai.com/v1", ("OPENAI_API_KEY",), required=True),
        _openai_like("vllm", "http://localhost:8000/v1"),
        _openai_like("vllm-no-tool-parser", "http://localhost:8000/v1"),
        _openai_like("llamacpp", "http://localhost:8080/v1"),  # llama.cpp's llama-server
        _openai_like("llama-cpp-python", "http://localhost:8000/v1"),  # python -m llama_cpp.server
        _openai_like("ollama-openai", "http://localhost:11434/v1"),  # Ollama's OpenAI-compatible endpoint
        _openai_like("openai-compatible", None),
        Provider(
            name="openai-responses",
            codec="openai-responses",
            base_url="https://api.openai.com/v1",
            path="/responses",
            stream_path="/responses",
            auth="bearer",
            key_env=("OPENAI_API_KEY",),
            key_required=True,
        ),
        Provider(
            name="anthropic",
            codec="anthropic",
            base_url="https://api.anthropic.com/v1",
            path="/messages",
            stream_path="/messages",
            auth="x-api-key",
            key_env=("ANTHROPIC_API_KEY",),
            key_required=True,
            headers={"anthropic-version": "2023-06-01"},
            version_segment="/v1",
        ),
        Provider(
            name="gemini",
            codec="gemini",
            base_url="https://generativelanguage.googleapis.com/v1beta",
            path=_GEMINI_MODEL,
            stream_path=_GEMINI_STREAM,
            auth="x-goog-api-key",
            key_env=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
            key_required=True,
            stream_end=_gemini_finished,
            version_segment="/v1beta",
        ),
        Provider(
            name="vertex",
            codec="gemini",
            base_url="https://{location_host}/v1",
            path=_VERTEX_MODEL + ":generateContent",
            stream_path=_VERTEX_MODEL + ":streamGenerateContent?alt=sse",
            auth="bearer",
            key_env=("VERTEX_ACCESS_TOKEN", "GOOGLE_OAUTH_ACCESS_TOKEN"),
            key_required=True,
            stream_end=_gemini_finished,
            options={
                "project": (("GOOGLE_CLOUD_PROJECT",), None),
                "location": (("GOOGLE_CLOUD_LOCATION",), "us-central1"),
            },
            version_segment="/v1",
        ),
        Provider(
            name="bedrock",
            codec="bedrock",
            base_url="https://bedrock-runtime.{region}.amazonaws.com",
            path="/model/{model}/converse",
            stream_path="/model/{model}/converse-stream",
            auth="aws",
            key_env=("AWS_BEARER_TOKEN_BEDROCK",),
            framing="eventstream",
            stream_end=_bedrock_finished,
            options={
                "region": (("AWS_REGION", "AWS_DEFAULT_REGION"), None),
                "aws_access_key_id": (("AWS_ACCESS_KEY_ID",), ""),
                "aws_secret_access_key": (("AWS_SECRET_ACCESS_KEY",), ""),
                "aws_session_token": (("AWS_SESSION_TOKEN",), ""),
            },
            quote_model=True,
        ),
        Provider(
            name="ollama",
            codec="ollama",
            base_url="http://localhost:11434",
            path="/api/chat",
            stream_path="/api/chat",
            auth="none",
            framing="ndjson",
        ),
    )
}
