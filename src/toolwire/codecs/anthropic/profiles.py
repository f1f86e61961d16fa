"""Where Anthropic's Messages body differs by the cloud that serves it, as data the codec reads.

Anthropic's own API takes `model` in the body and the version as a header. On Vertex AI
(`:rawPredict` / `:streamRawPredict`) the model is in the URL, the body has no `model` and
carries `"anthropic_version": "vertex-2023-10-16"` instead (Anthropic's docs, "Claude on Vertex
AI"); Bedrock's InvokeModel takes `"bedrock-2023-05-31"` the same way, and says "stream" by its
path (InvokeModelWithResponseStream), so its body has no `stream` field.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PROFILES", "AnthropicProfile"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AnthropicProfile:
    """One host of the Messages API.

    Attributes:
        name: The provider name this profile describes.
        model_in_body: Whether the body names the model (not when the URL does).
        body_version: The `anthropic_version` the body carries, or `None` (the header says it).
        stream_in_body: Whether a streamed request says so in its body (not on Bedrock: the path does).
    """

    name: str
    model_in_body: bool = True
    body_version: str | None = None
    stream_in_body: bool = True


PROFILES: dict[str, AnthropicProfile] = {
    "anthropic": AnthropicProfile(name="anthropic"),
    "vertex-anthropic": AnthropicProfile(
        name="vertex-anthropic", model_in_body=False, body_version="vertex-2023-10-16"
    ),
    "bedrock-anthropic": AnthropicProfile(
        name="bedrock-anthropic", model_in_body=False, body_version="bedrock-2023-05-31", stream_in_body=False
    ),
}
