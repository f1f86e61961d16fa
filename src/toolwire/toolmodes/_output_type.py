"""What a typed reply must be: its JSON Schema as sent, and the check that turns JSON into the value.

An `OutputType` comes from a Python type (a Pydantic model, a dataclass, a TypedDict, a scalar,
a union of them: pydantic's `TypeAdapter` gives the schema and validates) or from a bare JSON
Schema (`--output-schema`, a gateway client's `response_format`: checked with `jsonschema`).
Every strategy sends an object: a tool's parameters and most providers' JSON output must be
one, so a type whose schema is not an object is wrapped as `{"value": ...}` and unwrapped on
the way back. Reading is lenient: the bare value is taken too when the model left the wrapper
out. Pydantic and jsonschema are imported only when an output type is built.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolwire.codecs.common.repair import repair_json

__all__ = ["InvalidOutput", "OutputType", "as_output_type", "find_json", "partial_json"]

_WRAPPER = "value"
_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\n?(.*?)(?:```|\Z)", re.S)
_MAX_ERRORS = 5


class InvalidOutput(ValueError):
    """A reply's JSON did not validate; `errors` says why, one line per problem."""

    def __init__(self, errors: str) -> None:
        super().__init__(errors)
        self.errors = errors


@dataclass(frozen=True, slots=True)
class OutputType:
    """The type a reply must have, as the strategies send and check it.

    Attributes:
        schema: The JSON Schema of the object the model writes (wrapped when `wrapped`).
        name: A short name (the type's), for `response_format` and the output tool's description.
        description: The type's docstring or schema description, if any.
        wrapped: Whether the value travels as `{"value": ...}`.
        check: Turns the unwrapped JSON value into the typed value, or raises `InvalidOutput`.
    """

    schema: dict[str, Any]
    name: str
    description: str | None
    wrapped: bool
    check: Callable[[Any], Any]

    @classmethod
    def of(cls, output_type: Any) -> OutputType:
        """The output type for a Python type (anything pydantic's `TypeAdapter` takes)."""
        from pydantic import TypeAdapter

        adapter: TypeAdapter[Any] = TypeAdapter(output_type)
        schema = adapter.json_schema()
        name = _type_name(output_type, schema)

        def check(value: Any) -> Any:
            from pydantic import ValidationError

            try:
                return adapter.validate_python(value)
            except ValidationError as exc:
                raise InvalidOutput(_pydantic_errors(exc)) from None

        return cls._built(schema, name, check)

    @classmethod
    def from_schema(cls, schema: dict[str, Any], name: str | None = None) -> OutputType:
        """The output type for a bare JSON Schema; the value is the JSON as it validates.

        Raises:
            ValueError: `schema` is not a valid JSON Schema.
        """
        from jsonschema import exceptions, validators

        validator_class = validators.validator_for(schema, default=validators.Draft202012Validator)
        try:
            validator_class.check_schema(schema)
        except exceptions.SchemaError as exc:
            raise ValueError(f"The output schema is not a valid JSON Schema: {exc.message}") from None
        validator = validator_class(schema)

        def check(value: Any) -> Any:
            errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
            if errors:
                raise InvalidOutput("\n".join(_schema_error(e) for e in errors[:_MAX_ERRORS]))
            return value

        return cls._built(schema, name or str(schema.get("title") or "response"), check)

    @classmethod
    def _built(cls, schema: dict[str, Any], name: str, check: Callable[[Any], Any]) -> OutputType:
        description = schema.get("description") if isinstance(schema.get("description"), str) else None
        if _is_object(schema):
            return cls(schema=schema, name=_safe_name(name), description=description, wrapped=False, check=check)
        inner = {k: v for k, v in schema.items() if k != "$defs"}
        wrapper: dict[str, Any] = {
            "type": "object",
            "properties": {_WRAPPER: inner},
            "required": [_WRAPPER],
            "additionalProperties": False,
        }
        if "$defs" in schema:
            wrapper["$defs"] = schema["$defs"]
        return cls(schema=wrapper, name=_safe_name(name), description=description, wrapped=True, check=check)

    def validate(self, value: Any) -> Any:
        """The typed value for the JSON the model wrote (wrapped or bare), or raises `InvalidOutput`."""
        if self.wrapped and isinstance(value, dict) and set(value) == {_WRAPPER}:
            return self.check(value[_WRAPPER])
        return self.check(value)

    def validate_text(self, text: str) -> Any:
        """The typed value for a reply's text (JSON found fenced or bare, repaired), or raises `InvalidOutput`."""
        found = find_json(text)
        if found is None:
            raise InvalidOutput("The reply holds no JSON value; reply with only the JSON.")
        return self.validate(found)

    def unwrapped(self, value: Any) -> Any:
        """A partial value as the caller sees it (without the `{"value": ...}` wrapper)."""
        if self.wrapped and isinstance(value, dict):
            return value.get(_WRAPPER)
        return value


def as_output_type(wanted: Any) -> OutputType:
    """An `OutputType` as given, from a JSON Schema (a dict), or from a Python type."""
    if isinstance(wanted, OutputType):
        return wanted
    if isinstance(wanted, dict):
        return OutputType.from_schema(wanted)
    return OutputType.of(wanted)


def find_json(text: str) -> Any | None:
    """The JSON value in a reply: the whole text, a fenced block, or the first `{`/`[` on (repaired)."""
    for candidate in _candidates(text):
        try:
            return json.loads(candidate)
        except ValueError:
            pass
        repaired = repair_json(candidate)
        if repaired is not None and isinstance(repaired.value, dict | list):
            return repaired.value
    return None


def partial_json(text: str) -> dict[str, Any] | None:
    """The object a prefix of a reply's JSON holds so far, with only the fields already complete.

    The last field of a cut-off object may still grow (a string, a number, a nested object), so
    it is left out: each partial object holds a prefix of the final object's fields.
    """
    start = text.find("{")
    if start < 0:
        return None
    try:  # a whole object, whatever follows it (a closing fence)
        whole, _ = json.JSONDecoder().raw_decode(text, start)
        return whole if isinstance(whole, dict) else None
    except ValueError:
        pass
    repaired = repair_json(text[start:])
    if repaired is None or not isinstance(repaired.value, dict):
        return None
    value = repaired.value
    if repaired.cut and value:
        value = dict(list(value.items())[:-1])
    return value


def _candidates(text: str) -> list[str]:
    stripped = text.strip()
    out = [stripped]
    out.extend(m.group(1).strip() for m in _FENCE.finditer(text))
    starts = [i for i in (stripped.find("{"), stripped.find("[")) if i >= 0]
    if starts:
        out.append(stripped[min(starts) :])
    return [c for c in out if c]


def _is_object(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "object" and isinstance(schema.get("properties", {}), dict)


def _type_name(output_type: Any, schema: dict[str, Any]) -> str:
    title = schema.get("title")
    if isinstance(title, str):
        return title
    return str(getattr(output_type, "__name__", None) or "response")


def _safe_name(name: str) -> str:
    """A name every provider takes for a schema or tool (`^[a-zA-Z0-9_-]{1,64}$`)."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "response"


def _pydantic_errors(exc: Any) -> str:
    lines = []
    for error in exc.errors(include_url=False)[:_MAX_ERRORS]:
        where = ".".join(str(p) for p in error["loc"])
        lines.append(f"{where}: {error['msg']}" if where else str(error["msg"]))
    return "\n".join(lines)


def _schema_error(error: Any) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else str(error.message)
