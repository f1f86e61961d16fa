"""Exact checks of wire bodies against the official SDKs' types (dev dependencies only).

`validate_python` alone proves little: TypedDict validation drops keys it does not know,
`Iterable[...]` fields are validated lazily (only when drained), and the SDKs' pydantic
models keep unknown keys in `model_extra`. `assert_sdk_exact` closes all three gaps: it
drains every lazy iterable, fails on any unknown key, and checks that nothing was changed.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, TypeAdapter

__all__ = ["assert_sdk_exact", "drain"]

_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}  # kept alive: lazy iterables validate through them


def assert_sdk_exact(
    sdk_type: Any, data: Any, *, extensions: frozenset[str] = frozenset(), same_values: bool = True
) -> None:
    """Fail unless `data` is exactly an instance of `sdk_type` (a TypedDict, model or union).

    `extensions` names paths that may be there beyond the SDK's (`$.choices[0].delta.reasoning_content`:
    a de-facto field other servers send), not counted as unknown. `same_values=False` skips the
    final comparison, for types that re-encode values (google-genai dumps bytes as URL-safe
    base64; its models forbid unknown keys by themselves).
    """
    adapter = _ADAPTERS.get(sdk_type)
    if adapter is None:  # built once per type: the Responses event union takes ~0.1 s to build
        adapter = _ADAPTERS[sdk_type] = TypeAdapter(sdk_type)
    value = adapter.validate_python(copy.deepcopy(data))
    unknown = [key for key in _unknown_keys(value, "$") if key not in extensions]
    assert unknown == [], f"keys the SDK does not know: {unknown}"
    plain = drain(value)
    assert plain == data or not same_values


def drain(value: Any) -> Any:
    """A validated value as plain JSON: models dumped, and the lazy validators of `Iterable`
    fields consumed, so every item they hold is validated too."""
    if isinstance(value, BaseModel):
        return drain(value.model_dump(mode="json", by_alias=True, exclude_unset=True))
    if isinstance(value, dict):
        return {k: drain(v) for k, v in value.items()}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return [drain(v) for v in value]


def _unknown_keys(value: Any, where: str) -> Iterator[str]:
    if isinstance(value, BaseModel):
        yield from (f"{where}.{key}" for key in value.model_extra or {})
        for name in type(value).model_fields:
            yield from _unknown_keys(getattr(value, name), f"{where}.{name}")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _unknown_keys(item, f"{where}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _unknown_keys(item, f"{where}[{index}]")
