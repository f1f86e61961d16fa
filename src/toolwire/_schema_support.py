"""What one server's constrained-decoding engine enforces of a JSON Schema, as data.

The codecs' server profiles name a `SchemaSupport`; `toolwire.constrained.loosen` cuts a schema
to it. Re-exported by `toolwire.schema`. Imports only the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["PORTABLE", "SchemaSupport"]

_NUMERIC_BOUNDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
_STRING_LENGTHS = frozenset({"minLength", "maxLength"})
_ARRAY_LENGTHS = frozenset({"minItems", "maxItems"})
# Never part of a grammar: annotations, and validation-only keywords that no engine turns into one.
_ALWAYS_DROPPED = frozenset(
    {"title", "default", "examples", "$schema", "$id", "$comment", "deprecated", "readOnly", "writeOnly"}
    | {"uniqueItems", "minProperties", "maxProperties", "dependentRequired", "dependentSchemas", "if", "then", "else"}
    | {"not", "contains", "minContains", "maxContains", "unevaluatedProperties", "unevaluatedItems", "propertyNames"}
    | {"patternProperties", "optional"}
)


@dataclass(frozen=True, slots=True)
class SchemaSupport:
    """What one schema engine can enforce; everything else is loosened before sending.

    Local `$ref`s are always inlined, whatever the engine: a tool's `#/$defs/...` would point
    into the wrong document once its schema sits inside the reply schema. A reference back into
    itself (a recursive model) therefore becomes "any object", with a note.

    Attributes:
        pattern: `pattern` on strings.
        formats: The `format` values understood (`date`, `uuid`, ...).
        numeric_bounds: `minimum`, `maximum`, their exclusive forms and `multipleOf`.
        string_lengths: `minLength` / `maxLength`.
        array_lengths: `minItems` / `maxItems`.
        string_char_pattern: For an engine whose own string rule is looser than JSON's, one
            character of a string's JSON text as a regex; every string the tool leaves free (no
            `pattern`, `enum`, `const` or `format`) gets `pattern: ^(<this>)*$`, its length
            bounds folded in. Only for engines that read `pattern` as the string's JSON text.
    """

    pattern: bool = False
    formats: frozenset[str] = field(default_factory=frozenset)
    numeric_bounds: bool = False
    string_lengths: bool = True
    array_lengths: bool = True
    string_char_pattern: str | None = None

    def drops(self, keyword: str, value: Any) -> bool:
        """Whether `keyword: value` is beyond this engine."""
        return (
            keyword in _ALWAYS_DROPPED
            or (keyword == "pattern" and not self.pattern)
            or (keyword == "format" and value not in self.formats)
            or (keyword in _NUMERIC_BOUNDS and not self.numeric_bounds)
            or (keyword in _STRING_LENGTHS and not self.string_lengths)
            or (keyword in _ARRAY_LENGTHS and not self.array_lengths)
        )


# What any engine toolwire knows takes: objects, arrays, enums, const, anyOf, lengths; no refs.
PORTABLE = SchemaSupport()
