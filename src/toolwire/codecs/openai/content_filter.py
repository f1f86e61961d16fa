"""Azure OpenAI's content filter results, read into a `ContentFilterError` that names the categories.

A filtered prompt is HTTP 400 `{"error": {"code": "content_filter", "innererror":
{"content_filter_result": {"violence": {"filtered": true, "severity": "high"}, ...}}}}`; a
filtered reply stops with `finish_reason: "content_filter"`, its categories in the choice's
`content_filter_results` (or the stream's filter-only chunks) and the prompt's in
`prompt_filter_results` (learn.microsoft.com, Azure OpenAI "Content filtering"). Peers turned
both into a 500 or dropped the categories (LiteLLM #4941, #9662); here they stay readable.
"""

from __future__ import annotations

from typing import Any

from toolwire.codecs.common.wire import list_or_empty, object_or_empty
from toolwire.errors import ContentFilterError

__all__ = [
    "FILTERED",
    "filtered_categories",
    "prompt_categories",
    "prompt_filter_error",
    "reply_categories",
    "reply_filter_error",
]

FILTERED = "content_filter"  # the finish reason and the error code


def filtered_categories(results: Any) -> list[str]:
    """The categories marked `filtered` (or `detected`, for jailbreak and protected material) in one result map."""
    found: list[str] = []
    for category, verdict in object_or_empty(results).items():
        verdict = object_or_empty(verdict)
        if verdict.get("filtered") is True or (
            verdict.get("detected") is True and verdict.get("filtered") is not False
        ):
            found.append(str(category))
    return found


def prompt_categories(body: dict[str, Any]) -> list[str]:
    """The categories filtered in a body's `prompt_filter_results` (a stream's first chunk has them)."""
    results = list_or_empty(body.get("prompt_filter_results") or body.get("prompt_annotations"))
    return [c for item in results for c in filtered_categories(object_or_empty(item).get("content_filter_results"))]


def _merge(*groups: list[str]) -> list[str]:
    return list(dict.fromkeys(c for group in groups for c in group))


def reply_filter_error(provider: str, categories: list[str], body: Any = None) -> ContentFilterError:
    """The error for a reply the filter stopped (`finish_reason: "content_filter"`)."""
    named = ", ".join(categories) or "no category named"
    return ContentFilterError(
        f"{provider}'s content filter stopped the reply ({named}); rephrase the request or adjust the "
        "deployment's content filter policy.",
        provider=provider,
        categories=categories,
        body=body,
    )


def reply_categories(body: dict[str, Any]) -> list[str]:
    """The categories of a whole `chat.completion` body: its choice's, then its prompt's."""
    choices = list_or_empty(body.get("choices"))
    choice = object_or_empty(choices[0]) if choices else {}
    return _merge(filtered_categories(choice.get("content_filter_results")), prompt_categories(body))


def prompt_filter_error(
    provider: str, body: Any, status: int | None, request_id: str | None
) -> ContentFilterError | None:
    """The typed error for an HTTP 400 with code `content_filter`, or `None` for any other error body."""
    error = object_or_empty(object_or_empty(body).get("error"))
    if error.get("code") != FILTERED:
        return None
    inner = object_or_empty(error.get("innererror"))
    categories = filtered_categories(inner.get("content_filter_result"))
    named = ", ".join(categories) or "no category named"
    return ContentFilterError(
        f"{provider}'s content filter blocked the prompt ({named}): {error.get('message') or 'no message'!s}; "
        "rephrase the request or adjust the deployment's content filter policy.",
        provider=provider,
        status=status,
        request_id=request_id,
        body=body,
        categories=categories,
    )
