"""The tools and reply-schema pieces the constrained tests share, written out as literals."""

from __future__ import annotations

from typing import Any

from toolwire.types import ToolDefinition

AREA = ToolDefinition(
    name="triangle_area",
    description="Area of a triangle.",
    parameters={
        "type": "object",
        "properties": {"base": {"type": "integer"}, "height": {"type": "number"}},
        "required": ["base", "height"],
    },
)
WEATHER = ToolDefinition(
    name="weather",
    description="Weather in a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string", "pattern": "^[A-Z]"}},
        "required": ["city"],
    },
)
AREA_ARGUMENTS = {**(AREA.parameters or {}), "additionalProperties": False}
WEATHER_ARGUMENTS = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}


def call_schema(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"name": {"const": name}, "arguments": arguments},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


def listed(items: dict[str, Any], least: int, most: int) -> dict[str, Any]:
    return {"type": "array", "items": items, "minItems": least, "maxItems": most}
