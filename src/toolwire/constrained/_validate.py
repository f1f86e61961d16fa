"""Check a call's arguments against its tool's own JSON Schema (the one before any loosening).

Uses `jsonschema` (the reference validator for Python), imported on first use, with the draft
the schema names (2020-12 when it names none). Imports only the standard library otherwise.
"""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from typing import Any

__all__ = ["argument_errors"]

logger = logging.getLogger("toolwire.constrained")
_MAX_ERRORS = 3


def argument_errors(arguments: dict[str, Any], schema: dict[str, Any] | None) -> str | None:
    """What is wrong with `arguments` for `schema`, as one sentence; None when they match.

    A schema that is not valid JSON Schema itself cannot judge anything: it is logged at debug
    level and the arguments pass.
    """
    if not schema:
        return None
    validator = _validator(json.dumps(schema, sort_keys=True))
    if validator is None:
        return None
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    said = "; ".join(_describe(error) for error in errors[:_MAX_ERRORS])
    more = f" (and {len(errors) - _MAX_ERRORS} more)" if len(errors) > _MAX_ERRORS else ""
    return f"The arguments do not match the tool's schema: {said}{more}."


@lru_cache(maxsize=256)
def _validator(schema_text: str) -> Any:
    from jsonschema import exceptions, validators

    schema = json.loads(schema_text)
    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as exc:
        logger.debug(
            "constrained mode: a tool schema is not valid JSON Schema (%s); its calls are not validated", exc.message
        )
        return None
    return cls(schema)


def _describe(error: Any) -> str:
    where = "/".join(str(p) for p in error.absolute_path)
    return f"at {where!r}: {error.message}" if where else str(error.message)
