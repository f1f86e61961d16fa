"""Bring your own key: the Copilot CLI as the agent runtime, the model served by your own provider.

`session.create` takes a `provider` object (the Copilot SDKs' `ProviderConfig`): the CLI
then sends every model call straight to that endpoint with that key, and needs no GitHub
sign-in at all (checked with CLI 1.0.102 against an OpenAI-compatible loopback server).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = ["BYOK_TYPES", "ByokType", "CopilotProvider", "WireApi", "provider_wire"]

ByokType: TypeAlias = Literal["openai", "azure", "anthropic"]
WireApi: TypeAlias = Literal["completions", "responses"]
BYOK_TYPES: tuple[ByokType, ...] = ("openai", "azure", "anthropic")
"""`openai` also covers OpenAI-compatible servers (vLLM, Ollama, LiteLLM, ...)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CopilotProvider:
    """The model endpoint the Copilot CLI calls instead of GitHub's Copilot API.

    Attributes:
        base_url: The API's URL, e.g. `https://api.openai.com/v1` or `http://localhost:8000/v1`.
        type: `openai` (and OpenAI-compatible servers), `azure` or `anthropic`.
        api_key: The provider's key (sent by the CLI; never logged or recorded by toolwire).
        bearer_token: A bearer token instead of a key (Azure AD); wins over `api_key`.
        wire_api: `completions` (the default) or `responses`, for `openai` and `azure`.
        azure_api_version: Azure's `api-version`, e.g. `2025-04-01-preview`.
    """

    base_url: str
    type: ByokType = "openai"
    api_key: str | None = field(default=None, repr=False)
    bearer_token: str | None = field(default=None, repr=False)
    wire_api: WireApi | None = None
    azure_api_version: str | None = None

    def __post_init__(self) -> None:
        if self.type not in BYOK_TYPES:
            raise ValueError(f"Unknown Copilot provider type {self.type!r}; use one of: {', '.join(BYOK_TYPES)}.")
        if not self.base_url:
            raise ValueError("A Copilot provider needs base_url=..., the URL of the model's API.")

    def to_wire(self) -> dict[str, Any]:
        """The `provider` object of `session.create`."""
        wire: dict[str, Any] = {"type": self.type, "baseUrl": self.base_url}
        optional = {"apiKey": self.api_key, "bearerToken": self.bearer_token, "wireApi": self.wire_api}
        wire.update({k: v for k, v in optional.items() if v is not None})
        if self.azure_api_version is not None:
            wire["azure"] = {"apiVersion": self.azure_api_version}  # nested, not top-level, per the SDKs
        return wire


def provider_wire(provider: CopilotProvider | Mapping[str, Any] | None) -> dict[str, Any] | None:
    """`provider` as `session.create` takes it; a mapping is taken as the wire object itself."""
    if provider is None or isinstance(provider, CopilotProvider):
        return provider.to_wire() if provider else None
    if not isinstance(provider.get("baseUrl"), str):
        raise ValueError(f"A Copilot provider mapping needs a 'baseUrl' string, got keys {sorted(provider)!r}.")
    return dict(provider)
