"""What a client accepts as a tool: a `ToolDefinition`, or anything with a `.definition`.

Below `client`, `session` and `copilot`, so that each of them can read tools without importing
another (the layers stay a line, not a circle). Imports only `toolwire.types`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeAlias

from toolwire.types import ToolDefinition

__all__ = ["ToolLike", "as_definitions"]


class _HasDefinition(Protocol):
    @property
    def definition(self) -> ToolDefinition: ...


ToolLike: TypeAlias = ToolDefinition | _HasDefinition
"""A `ToolDefinition`, or anything with a `.definition` (a `toolwire.tools.Tool`)."""


def as_definitions(tools: Sequence[ToolLike] | None) -> list[ToolDefinition]:
    """The `ToolDefinition`s of `tools` (definitions, or `Tool`s and anything else with a `.definition`)."""
    return [t if isinstance(t, ToolDefinition) else t.definition for t in tools or ()]
