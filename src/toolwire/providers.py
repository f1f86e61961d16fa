"""What toolwire knows about reaching each provider, held as data: codec, URLs, auth, stream end.

`connect("name:model")` looks a provider up here; quirks of OpenAI-compatible servers are
capability flags in the codec's profiles (`profile`), never `if` chains. Imports only the
http package's `Framing` type and the standard library.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from toolwire.http import Framing

__all__ = ["PROVIDERS", "Provider"]


def _openai_finished(event: dict[str, Any]) -> bool:
    # Compatible servers sometimes omit `[DONE]`; a finish_reason ends the reply just as well.
    # A loop, not `any` over a generator: this runs for every chunk of every OpenAI-format stream.
    choices = event.get("choices")
    if isinstance(choices, list):
        for choice in choices:
            if isinstance(choice, dict) and choice.get("finish_reason"):
                return True
    return False


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
        auth: How the key travels: `bearer`, `x-api-key`, `x-goog-api-key`, `api-key` or `none`;
            `aws`: a bearer key when there is one, else AWS SigV4 signing (`aws_*` options).
        key_env: Environment variables holding the key, first found wins.
        key_required: Whether `connect` refuses to build a client without a key (or a token).
        token_env: Environment variables holding a bearer token used when there is no key
            (Azure's Entra ID token); `access_token=` gives one directly.
        warn_without_key: Log a warning when a client of this provider sends no key at all.
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
        derive: Template values computed from the options and the model (Vertex's host name,
            Azure's deployment or v1 paths).
        base_url_option: The option a `base_url=` stands for (Azure's resource `endpoint`), when
            the provider's URLs are built below it rather than given whole.
        notes: One line for the README's providers table: what differs from the wire format's own API.
    """

    name: str
    codec: str
    base_url: str | None
    path: str
    stream_path: str
    auth: Literal["bearer", "x-api-key", "x-goog-api-key", "api-key", "aws", "none"]
    key_env: tuple[str, ...] = ()
    key_required: bool = False
    token_env: tuple[str, ...] = ()
    warn_without_key: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)
    framing: Framing = "sse"
    stream_end: Callable[[dict[str, Any]], bool] | None = None
    profile: str | None = None
    options: Mapping[str, tuple[tuple[str, ...], str | None]] = field(default_factory=dict)
    version_segment: str = ""
    quote_model: bool = False
    derive: Callable[[Mapping[str, str], str], dict[str, str]] | None = None
    base_url_option: str | None = None
    notes: str = ""

    def address_hint(self) -> str:
        """What a base URL for this provider looks like, for a 404 that says nothing is served there."""
        if self.base_url_option is not None:
            return f"give {self.name}'s {self.base_url_option} as its SDK takes it, e.g. https://NAME.openai.azure.com"
        if self.codec == "openai":
            return "OpenAI-compatible servers usually end in /v1, e.g. http://localhost:8000/v1"
        example = (self.base_url or "").format(
            location_host="us-central1-aiplatform.googleapis.com", region="us-east-1"
        )
        if self.version_segment:
            example = example.removesuffix(self.version_segment)
        added = self.version_segment + self.path.split("{", 1)[0]
        return f"give the server's root as {self.name}'s SDK takes it, e.g. {example}; toolwire adds {added}..."


def _openai_like(
    name: str,
    base_url: str | None,
    key_env: tuple[str, ...] = (),
    required: bool = False,
    notes: str = "",
    **more: Any,
) -> Provider:
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
        notes=notes,
        **more,
    )


def _hosted(name: str, base_url: str, key_env: str, notes: str = "") -> Provider:
    """An OpenAI-compatible cloud: a fixed address and the key variable its own SDK reads."""
    return _openai_like(name, base_url, (key_env,), required=True, notes=notes)


def _vertex_host(values: Mapping[str, str], model: str) -> dict[str, str]:
    # Vertex's global endpoint has no region prefix in its host name.
    location = values["location"]
    host = "aiplatform.googleapis.com" if location == "global" else f"{location}-aiplatform.googleapis.com"
    return {"location_host": host}


_AZURE_V1 = ("v1", "latest", "preview")  # api-version values of the v1 API (no deployment in the path)


def _azure_paths(values: Mapping[str, str], model: str) -> dict[str, str]:
    """Azure OpenAI's two address forms, as its SDK and its v1 API docs build them.

    Classic: `{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=DATE` (the
    deployment names the model). v1: `{endpoint}/openai/v1/chat/completions`, the deployment in the
    body's `model` (`?api-version=preview` for preview features).
    """
    endpoint = values["endpoint"].rstrip("/").removesuffix("/openai/v1").removesuffix("/openai")
    version = values["api_version"]
    query = "" if version in ("v1", "latest") else "?" + urllib.parse.urlencode({"api-version": version})
    if version in _AZURE_V1:
        api = f"{endpoint}/openai/v1"
        return {"azure_chat_root": api, "azure_api_root": api, "azure_query": query}
    deployment = urllib.parse.quote(model, safe="")
    chat = f"{endpoint}/openai/deployments/{deployment}"
    return {"azure_chat_root": chat, "azure_api_root": f"{endpoint}/openai", "azure_query": query}


_AZURE_OPTIONS: Mapping[str, tuple[tuple[str, ...], str | None]] = {
    "endpoint": (("AZURE_OPENAI_ENDPOINT",), None),
    "api_version": (("OPENAI_API_VERSION",), "v1"),
}
_AZURE_AUTH: dict[str, Any] = {
    "auth": "api-key",
    "key_env": ("AZURE_OPENAI_API_KEY",),
    "key_required": True,
    "token_env": ("AZURE_OPENAI_AD_TOKEN",),
    "options": _AZURE_OPTIONS,
    "derive": _azure_paths,
    "base_url_option": "endpoint",
}
_AZURE_NOTES = (
    "the model is the deployment; `api_version` a date: deployment URLs, else the v1 API; an Entra ID token "
    "instead of a key; content filter errors name the categories"
)
_VERTEX_OPTIONS: Mapping[str, tuple[tuple[str, ...], str | None]] = {
    "project": (("GOOGLE_CLOUD_PROJECT",), None),
    "location": (("GOOGLE_CLOUD_LOCATION",), "us-central1"),
}
_VERTEX_TOKEN = ("VERTEX_ACCESS_TOKEN", "GOOGLE_OAUTH_ACCESS_TOKEN")
# Bedrock's region, and the AWS credentials SigV4 signs with when there is no Bedrock API key.
_AWS_OPTIONS = {
    "region": (("AWS_REGION", "AWS_DEFAULT_REGION"), None),
    "aws_access_key_id": (("AWS_ACCESS_KEY_ID",), ""),
    "aws_secret_access_key": (("AWS_SECRET_ACCESS_KEY",), ""),
    "aws_session_token": (("AWS_SESSION_TOKEN",), ""),
}
_VERTEX_ANTHROPIC = "/projects/{project}/locations/{location}/publishers/anthropic/models/{model}"

_GEMINI_MODEL = "/models/{model}:generateContent"
_GEMINI_STREAM = "/models/{model}:streamGenerateContent?alt=sse"
_VERTEX_MODEL = "/projects/{project}/locations/{location}/publishers/google/models/{model}"

PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        _openai_like(
            "openai", "https://api.openai.com/v1", ("OPENAI_API_KEY",), required=True, notes="Chat Completions"
        ),
        _openai_like("vllm", "http://localhost:8000/v1", notes="vLLM started with a tool parser"),
        _openai_like("vllm-no-tool-parser", "http://localhost:8000/v1", notes="vLLM without one: named choices only"),
        _openai_like("llamacpp", "http://localhost:8080/v1", notes="llama.cpp's llama-server (--jinja)"),
        _openai_like("llama-cpp-python", "http://localhost:8000/v1", notes="python -m llama_cpp.server"),
        _openai_like("ollama-openai", "http://localhost:11434/v1", notes="Ollama's OpenAI-compatible endpoint"),
        _openai_like(
            "openai-compatible",
            None,
            ("OPENAI_API_KEY",),
            notes="any other server; no key sent (and a warning) when none is set",
            warn_without_key=True,
        ),
        _openai_like("lmstudio", "http://localhost:1234/v1", notes="LM Studio's local server"),
        _openai_like("sglang", "http://localhost:30000/v1", notes="SGLang's server (--tool-call-parser)"),
        _hosted(
            "mistral",
            "https://api.mistral.ai/v1",
            "MISTRAL_API_KEY",
            "9-character call ids (mapped back), `any`, no user turn right after a tool result",
        ),
        _hosted(
            "groq",
            "https://api.groq.com/openai/v1",
            "GROQ_API_KEY",
            "`tool_use_failed` read with the text-mode parsers",
        ),
        _hosted(
            "deepseek", "https://api.deepseek.com", "DEEPSEEK_API_KEY", "`reasoning_content` sent back beside calls"
        ),
        _hosted(
            "openrouter",
            "https://openrouter.ai/api/v1",
            "OPENROUTER_API_KEY",
            "comment lines skipped, in-stream errors typed",
        ),
        _hosted("xai", "https://api.x.ai/v1", "XAI_API_KEY", "no `strict` tools"),
        _hosted("together", "https://api.together.xyz/v1", "TOGETHER_API_KEY"),
        _hosted("fireworks", "https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY"),
        _hosted("cerebras", "https://api.cerebras.ai/v1", "CEREBRAS_API_KEY"),
        _hosted("huggingface", "https://router.huggingface.co/v1", "HF_TOKEN", "Hugging Face's inference router"),
        _hosted(
            "cohere", "https://api.cohere.ai/compatibility/v1", "CO_API_KEY", "compatibility API: no `stream_options`"
        ),
        Provider(
            name="azure",
            codec="openai",
            base_url="{azure_chat_root}",
            path="/chat/completions{azure_query}",
            stream_path="/chat/completions{azure_query}",
            stream_end=_openai_finished,
            profile="azure",
            notes=_AZURE_NOTES,
            **_AZURE_AUTH,
        ),
        Provider(
            name="azure-responses",
            codec="openai-responses",
            base_url="{azure_api_root}",
            path="/responses{azure_query}",
            stream_path="/responses{azure_query}",
            notes="Azure OpenAI's Responses API; as for azure",
            **_AZURE_AUTH,
        ),
        Provider(
            name="openai-responses",
            codec="openai-responses",
            base_url="https://api.openai.com/v1",
            path="/responses",
            stream_path="/responses",
            auth="bearer",
            key_env=("OPENAI_API_KEY",),
            key_required=True,
            notes="the Responses API",
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
            notes="the Messages API",
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
            notes="the Gemini API (AI Studio)",
        ),
        Provider(
            name="vertex",
            codec="gemini",
            base_url="https://{location_host}/v1",
            path=_VERTEX_MODEL + ":generateContent",
            stream_path=_VERTEX_MODEL + ":streamGenerateContent?alt=sse",
            auth="bearer",
            key_env=_VERTEX_TOKEN,
            key_required=True,
            stream_end=_gemini_finished,
            options=_VERTEX_OPTIONS,
            version_segment="/v1",
            derive=_vertex_host,
            notes="Gemini on Vertex AI: project and location options, an OAuth access token",
        ),
        Provider(
            name="vertex-anthropic",
            codec="anthropic",
            base_url="https://{location_host}/v1",
            path=_VERTEX_ANTHROPIC + ":rawPredict",
            stream_path=_VERTEX_ANTHROPIC + ":streamRawPredict",
            auth="bearer",
            key_env=_VERTEX_TOKEN,
            key_required=True,
            profile="vertex-anthropic",
            options={
                "project": (("ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT"), None),
                "location": (("CLOUD_ML_REGION", "GOOGLE_CLOUD_LOCATION"), "global"),
            },
            version_segment="/v1",
            derive=_vertex_host,
            notes="Claude on Vertex AI: the model in the URL, anthropic_version vertex-2023-10-16 in the body",
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
            options=_AWS_OPTIONS,
            quote_model=True,
            notes="The Converse API: region option, a Bedrock API key (bearer) or SigV4 from the AWS variables",
        ),
        Provider(
            name="bedrock-anthropic",
            codec="anthropic",
            base_url="https://bedrock-runtime.{region}.amazonaws.com",
            path="/model/{model}/invoke",
            stream_path="/model/{model}/invoke-with-response-stream",
            auth="aws",
            key_env=("AWS_BEARER_TOKEN_BEDROCK",),
            framing="eventstream-chunks",
            options=_AWS_OPTIONS,
            quote_model=True,
            profile="bedrock-anthropic",
            notes="Claude on Bedrock (InvokeModel): the model in the URL, anthropic_version bedrock-2023-05-31",
        ),
        Provider(
            name="ollama",
            codec="ollama",
            base_url="http://localhost:11434",
            path="/api/chat",
            stream_path="/api/chat",
            auth="none",
            framing="ndjson",
            notes="Ollama's own /api/chat",
        ),
    )
}
