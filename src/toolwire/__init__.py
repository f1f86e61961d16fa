"""toolwire: LLM tool calling that works the same way against every major provider.

This module only re-exports the public names; heavy modules (codecs, httpx2, the CLI)
load lazily on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from toolwire._serialize import dump_messages, load_messages
from toolwire.errors import (
    AuthenticationError,
    BadRequestError,
    CodecError,
    ContentFilterError,
    ModelFormatError,
    OutputValidationError,
    ProviderError,
    RateLimitError,
    StreamError,
    TimeoutError,
    ToolwireError,
)
from toolwire.types import (
    AssistantMessage,
    Done,
    ImagePart,
    Message,
    NamedToolChoice,
    Request,
    Response,
    ResponseFormat,
    ResultKind,
    StopReason,
    StreamEvent,
    SystemMessage,
    TextDelta,
    TextPart,
    ThinkingDelta,
    ThinkingPart,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    ToolDefinition,
    ToolResult,
    Usage,
    UserMessage,
)

if TYPE_CHECKING:
    from toolwire._connect import connect
    from toolwire.agent import (
        Agent,
        AgentEvent,
        CallRecord,
        RunFinished,
        RunResult,
        ToolFinished,
        ToolRejected,
        ToolStarted,
    )
    from toolwire.client import Client
    from toolwire.codecs import get_codec
    from toolwire.reviewers import AutoApprove, ConsoleReviewer, DenyAll, QuorumReviewer, ReviewDecision, Reviewer, Vote
    from toolwire.session import Session
    from toolwire.toolmodes import OutputResult, PartialOutput
    from toolwire.tools import Dependency, Depends, Tool, ToolContext, ToolError, define_tool, tool

__version__ = "0.1.0"
"""The package version (kept equal to pyproject.toml's by tests/test_architecture.py)."""

# Loaded on first use, so `import toolwire` does not pull in pydantic, httpx2 or the runtime.
_LAZY: dict[str, str] = {
    "Agent": "toolwire.agent",
    "AgentEvent": "toolwire.agent",
    "AutoApprove": "toolwire.reviewers",
    "CallRecord": "toolwire.agent",
    "Client": "toolwire.client",
    "ConsoleReviewer": "toolwire.reviewers",
    "DenyAll": "toolwire.reviewers",
    "Dependency": "toolwire.tools",
    "Depends": "toolwire.tools",
    "OutputResult": "toolwire.toolmodes",
    "PartialOutput": "toolwire.toolmodes",
    "QuorumReviewer": "toolwire.reviewers",
    "ReviewDecision": "toolwire.reviewers",
    "Reviewer": "toolwire.reviewers",
    "RunFinished": "toolwire.agent",
    "RunResult": "toolwire.agent",
    "Session": "toolwire.session",
    "Tool": "toolwire.tools",
    "ToolContext": "toolwire.tools",
    "ToolError": "toolwire.tools",
    "ToolFinished": "toolwire.agent",
    "ToolRejected": "toolwire.agent",
    "ToolStarted": "toolwire.agent",
    "Vote": "toolwire.reviewers",
    "connect": "toolwire._connect",
    "define_tool": "toolwire.tools",
    "get_codec": "toolwire.codecs",
    "tool": "toolwire.tools",
}

__all__ = [
    "Agent",
    "AgentEvent",
    "AssistantMessage",
    "AuthenticationError",
    "AutoApprove",
    "BadRequestError",
    "CallRecord",
    "Client",
    "CodecError",
    "ConsoleReviewer",
    "ContentFilterError",
    "DenyAll",
    "Dependency",
    "Depends",
    "Done",
    "ImagePart",
    "Message",
    "ModelFormatError",
    "NamedToolChoice",
    "OutputResult",
    "OutputValidationError",
    "PartialOutput",
    "ProviderError",
    "QuorumReviewer",
    "RateLimitError",
    "Request",
    "Response",
    "ResponseFormat",
    "ResultKind",
    "ReviewDecision",
    "Reviewer",
    "RunFinished",
    "RunResult",
    "Session",
    "StopReason",
    "StreamError",
    "StreamEvent",
    "SystemMessage",
    "TextDelta",
    "TextPart",
    "ThinkingDelta",
    "ThinkingPart",
    "TimeoutError",
    "Tool",
    "ToolCall",
    "ToolCallDelta",
    "ToolChoice",
    "ToolContext",
    "ToolDefinition",
    "ToolError",
    "ToolFinished",
    "ToolRejected",
    "ToolResult",
    "ToolStarted",
    "ToolwireError",
    "Usage",
    "UserMessage",
    "Vote",
    "connect",
    "define_tool",
    "dump_messages",
    "get_codec",
    "load_messages",
    "tool",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolwire' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
