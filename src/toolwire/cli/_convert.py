"""`toolwire convert`: a request body from one wire format to another, through the neutral `Request`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from toolwire.cli._settings import Settings, UsageError
from toolwire.codecs import get_codec
from toolwire.errors import CodecError
from toolwire.types import AssistantMessage, Request

__all__ = ["convert_command"]


def convert_command(settings: Settings, args: argparse.Namespace) -> int:
    """Decode a request body with one codec and print it as another encodes it."""
    body = _read_body(args.file)
    guess = looks_like(body)
    source = args.source or guess
    if source is None:
        raise UsageError(
            "Cannot tell the input's format (a body of plain messages reads as openai, anthropic or "
            "ollama alike); pass --from openai (or anthropic, ollama)."
        )
    if guess is not None and guess != source and (guess, source) not in _COMPATIBLE:
        raise UsageError(f"The input looks like the {guess} format, not {source}; pass --from {guess}.")
    try:
        request = get_codec(source).decode_request(body)
    except CodecError as exc:
        raise UsageError(f"The input is not a {source} request body: {exc.message}") from None
    if settings.model:  # --model (or [provider] model) names the target's model: Gemini bodies carry none
        request.model = settings.model
    if not request.model and args.target != "gemini":  # Gemini names the model in the URL, not the body
        raise UsageError(f"The {source} body names no model, and {args.target} bodies carry one; pass --model NAME.")
    _warn_unreadable_arguments(request, args.target)
    sys.stdout.write(json.dumps(get_codec(args.target).encode_request(request), indent=2, ensure_ascii=False) + "\n")
    return 0


def _read_body(file: str) -> dict[str, Any]:
    name = "stdin" if file == "-" else repr(file)
    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"Cannot read {name}: {exc.strerror or exc}.") from None
    except UnicodeDecodeError:
        raise UsageError(f"{name} is not UTF-8 text (a binary file?); give a JSON request body.") from None
    try:
        body = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{name} is not JSON ({exc}); give a request body as a JSON object.") from None
    if not isinstance(body, dict):
        raise UsageError(f"{name} holds a JSON {type(body).__name__}, not a request body (a JSON object).")
    return body


# Ollama's native body is close to OpenAI's: a guess between the two is never trusted.
_COMPATIBLE = {("openai", "ollama"), ("ollama", "openai")}


def looks_like(body: dict[str, Any]) -> str | None:
    """The wire format a request body unmistakably belongs to, or None when it could be several."""
    if "contents" in body or "systemInstruction" in body or "generationConfig" in body:
        return "gemini"
    if "input" in body and "messages" not in body:
        return "openai-responses"
    tools = body.get("tools")
    first_tool = tools[0] if isinstance(tools, list) and tools and isinstance(tools[0], dict) else {}
    if "input_schema" in first_tool or _has_block(body, ("tool_use", "tool_result")):
        return "anthropic"
    if "function" in first_tool or _has_role(body, ("tool",)):
        return "ollama" if "options" in body or "think" in body else "openai"
    return None


def _has_block(body: dict[str, Any], kinds: tuple[str, ...]) -> bool:
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") in kinds for b in content):
            return True
    return False


def _has_role(body: dict[str, Any], roles: tuple[str, ...]) -> bool:
    messages = body.get("messages")
    return any(isinstance(m, dict) and m.get("role") in roles for m in (messages if isinstance(messages, list) else []))


def _warn_unreadable_arguments(request: Request, target: str) -> None:
    """Say on stderr which calls' arguments could not be read, instead of converting them quietly."""
    kept = "kept as written" if target == "openai" else "sent as {} (the target takes only objects)"
    for message in request.messages:
        for call in message.tool_calls if isinstance(message, AssistantMessage) else ():
            if "arguments_error" in call.metadata:
                raw = call.metadata.get("raw_arguments")
                sys.stderr.write(
                    f"toolwire: warning: call {call.id} ({call.name}): {raw!r:.120} is not valid JSON; {kept}.\n"
                )
