"""The Berkeley Function Calling Leaderboard's AST rules, for Python categories, written for toolwire.

A model's answer is a list of calls in BFCL's decoded form, `[{name: {param: value}}]`; a case's
possible answer lists, per expected call, every accepted value of each parameter (`""` marks an
optional parameter that may be left out). The rules follow `bfcl_eval`'s own checker
(`eval_checker/ast_eval/ast_checker.py`, bfcl-eval 2026.3.23) decision for decision, including
its quirks, because a score is only comparable with the leaderboard's when it is computed the
same way; `bench/bfcl/crosscheck.py` runs both on the same outputs and must agree on every one:

- the function name must match exactly; every required parameter must be there, and every
  parameter given must be documented and listed in the possible answer;
- types are Python's exact types (`bool` is not an `int`), except that an `int` is accepted
  where a `float` is documented; arrays check their items one level deep; a value whose type
  matches the possible answer's instead of the documented one counts as a "variable";
- strings compare without case, spaces and `,./-_*^`; lists and dicts compare their strings
  the same way; a possible answer without `""` must be given;
- Java and JavaScript categories (`simple_java`, `simple_javascript`) take every argument as
  a string in that language's syntax, read back by the documented type before these rules
  (`toolwire.evals._bfcl_languages`); a value that is not a string is a type error;
- `parallel*` categories match calls in any order (greedily, each expected call taking the
  first unused output that satisfies it); `multiple*` categories expect one call among several
  tools; `irrelevance` expects no call at all; `live_relevance` expects a call of any function
  (it has no answer file: relevance is the answer).

Imports only the standard library and its sibling `_bfcl_languages`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolwire.evals._bfcl_languages import JAVA_TYPES, JS_TYPES, Language, language_of, to_value

__all__ = ["Verdict", "check_calls", "standardize"]

# BFCL's Python names for its documented types ("any" is checked as a string, as BFCL does).
_PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}
_NESTED = frozenset({"array", "tuple"})
_LANGUAGE_NESTED = frozenset({"Array", "ArrayList", "array"})
_IGNORED_CHARACTERS = re.compile(r"[ ,./\-_*^]")

Calls = Sequence[Mapping[str, Mapping[str, Any]]]


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether an answer is correct; when not, `kind` names the rule it broke and `error` says how."""

    valid: bool
    kind: str = ""
    error: str = ""
    is_variable: bool = False


_VALID = Verdict(valid=True)


def _fail(kind: str, error: str) -> Verdict:
    return Verdict(valid=False, kind=kind, error=error)


def standardize(text: str) -> str:
    """A string as BFCL compares it: no spaces or `,./-_*^`, lower case, single quotes as double."""
    return _IGNORED_CHARACTERS.sub("", text).lower().replace("'", '"')


def check_calls(
    category: str, functions: Sequence[Mapping[str, Any]], calls: Calls, possible_answer: Sequence[Mapping[str, Any]]
) -> Verdict:
    """Score one case of `category` (`simple_python`, `multiple`, `parallel`, `irrelevance`, ...).

    Args:
        category: The BFCL category; its name picks the rule, as in BFCL (`parallel` in it:
            order-free matching; `multiple`: one call among several tools; `irrelevance`: no call).
        functions: The case's function documents, as in the BFCL question file (BFCL names).
        calls: The model's calls, `[{name: arguments}]`, with BFCL's names.
        possible_answer: The case's `ground_truth` list (empty for irrelevance).
    """
    if "irrelevance" in category:
        if any(call for call in calls):
            return _fail("irrelevance:called", f"Expected no call, got {list(calls)!r}.")
        return _VALID
    if "relevance" in category:
        return _VALID if any(call for call in calls) else _fail("relevance:no_call", "Expected a call, got none.")
    language = language_of(category)
    if "parallel" in category:
        return _check_unordered(functions, calls, possible_answer, language)
    if len(calls) != (len(possible_answer) if "multiple" in category else 1):
        return _fail("wrong_count", f"Wrong number of calls: {len(calls)}.")
    if "multiple" in category:
        expected_name = next(iter(possible_answer[0]))
        return _check_call(_describe(functions, expected_name), calls[0], possible_answer[0], language)
    return _check_call(functions[0], calls[0], possible_answer[0], language)


def _describe(functions: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any]:
    return next((f for f in functions if f["name"] == name), functions[0])


def _check_unordered(
    functions: Sequence[Mapping[str, Any]], calls: Calls, possible_answer: Sequence[Any], language: Language
) -> Verdict:
    if len(calls) != len(possible_answer):
        return _fail("wrong_count", f"Wrong number of calls: {len(calls)}, expected {len(possible_answer)}.")
    used: set[int] = set()
    for position, expected in enumerate(possible_answer):
        description = _describe(functions, next(iter(expected)))
        match = next(
            (
                i
                for i, call in enumerate(calls)
                if i not in used and _check_call(description, call, expected, language).valid
            ),
            None,
        )
        if match is None:
            return _fail("no_match", f"No call matches expected call {position} ({next(iter(expected))!r}).")
        used.add(match)
    return _VALID


def _check_call(
    description: Mapping[str, Any],
    call: Mapping[str, Mapping[str, Any]],
    expected: Mapping[str, Any],
    language: Language = "python",
) -> Verdict:
    name = description["name"]
    if name not in call:
        return _fail("wrong_name", f"Function {name!r} not found in the call {dict(call)!r}.")
    arguments, answers = call[name], next(iter(expected.values()))
    properties, required = description["parameters"]["properties"], description["parameters"]["required"]
    missing = next((p for p in required if p not in arguments), None)
    if missing is not None:
        return _fail("missing_required", f"Missing required parameter {missing!r}.")
    for param, value in arguments.items():
        if param not in properties or param not in answers:
            return _fail("unexpected_param", f"Unexpected parameter {param!r}.")
        verdict = _check_value(param, value, properties[param], answers[param], language)
        if not verdict.valid:
            return verdict
    left_out = next((p for p, options in answers.items() if p not in arguments and "" not in options), None)
    if left_out is not None:
        return _fail("missing_optional", f"Parameter {left_out!r} is not optional here and was not given.")
    return _VALID


def _check_value(param: str, value: Any, schema: Mapping[str, Any], options: list[Any], language: Language) -> Verdict:
    documented = schema["type"]
    if language != "python":
        return _check_language_value(param, value, schema, options, language)
    expected = _PYTHON_TYPES[documented]
    nested = _PYTHON_TYPES[schema["items"]["type"]] if documented in _NESTED else None
    if documented == "float" and type(value) is int:
        value = float(value)  # Python would convert it too
    return _check_typed_value(param, value, options, expected, nested)


def _check_language_value(
    param: str, value: Any, schema: Mapping[str, Any], options: list[Any], language: Language
) -> Verdict:
    """A Java/JavaScript argument: a string, read by its documented type, then the usual rules."""
    documented = schema["type"]
    types = JAVA_TYPES if language == "java" else JS_TYPES
    if type(value) is not str:
        kind = "type_error:java" if language == "java" else "type_error:js"
        return _fail(kind, f"Wrong type for {param!r}: expected a String, got {type(value).__name__}.")
    item = schema["items"]["type"] if documented in _LANGUAGE_NESTED else None
    nested = types[item] if item is not None else None
    return _check_typed_value(param, to_value(value, documented, item, language), options, types[documented], nested)


def _check_typed_value(param: str, value: Any, options: list[Any], expected: type, nested: type | None) -> Verdict:
    typed = _check_type(param, value, options, expected, nested)
    if not typed.valid:
        return typed
    if not typed.is_variable:
        if expected is dict:
            return _check_dict(param, value, options)
        if expected is list and nested is dict:
            return _check_list_of_dicts(param, value, options)
        if expected is str:
            return _check_string(param, value, options)
        if expected is list:
            return _check_list(param, value, options)
    if value not in options:
        return _fail("value", f"Invalid value for {param!r}: {value!r}; expected one of {options!r}.")
    return _VALID


def _answer_type(options: Sequence[Any]) -> type | None:
    """The type of the first possible answer that is not the optional marker `""`."""
    return next((type(option) for option in options if option != ""), None)


def _check_type(param: str, value: Any, options: Sequence[Any], expected: type, nested: type | None) -> Verdict:
    answer_type = _answer_type(options)
    is_variable = answer_type is not None and answer_type is not expected
    if type(value) is expected:
        if nested is None or not isinstance(value, list):
            return Verdict(valid=True, is_variable=is_variable)
        for option in options:
            # An option that is not a list (the optional marker) accepts any items, as in BFCL.
            if not isinstance(option, list) or all(
                _check_type(param, item, option, nested, None).valid for item in value
            ):
                return Verdict(valid=True, is_variable=is_variable)
        return _fail("type:nested", f"Items of {param!r} are not all {nested.__name__}: {value!r}.")
    if answer_type is not None and type(value) is answer_type:
        return Verdict(valid=True, is_variable=True)
    return _fail("type", f"Wrong type for {param!r}: expected {expected.__name__}, got {type(value).__name__}.")


def _standard(value: Any) -> Any:
    return standardize(value) if type(value) is str else value


def _check_string(param: str, value: str, options: Sequence[Any]) -> Verdict:
    if standardize(value) not in [standardize(o) for o in options if type(o) is str]:
        return _fail("value:string", f"Invalid value for {param!r}: {value!r}; expected one of {list(options)!r}.")
    return _VALID


def _check_list(param: str, value: list[Any], options: Sequence[Any]) -> Verdict:
    # A str option is walked character by character, as BFCL's index loop does.
    if [_standard(item) for item in value] not in [[_standard(item) for item in option] for option in options]:
        return _fail("value:list", f"Invalid value for {param!r}: {value!r}; expected one of {list(options)!r}.")
    return _VALID


def _check_dict(param: str, value: Mapping[str, Any], options: Sequence[Any]) -> Verdict:
    verdict = _fail("value:dict", f"No possible answer given for the dict {param!r}.")
    for option in options:
        if option == "":
            continue
        verdict = _check_one_dict(value, option)
        if verdict.valid:
            return verdict
    return verdict


def _check_one_dict(value: Mapping[str, Any], option: Mapping[str, Any]) -> Verdict:
    for key, item in value.items():
        if key not in option:
            return _fail("value:dict_key", f"Unexpected dict key {key!r}.")
        if _standard(item) not in [_standard(o) for o in option[key]]:
            return _fail("value:dict_value", f"Invalid value for dict key {key!r}: {item!r}.")
    missing = next((key for key, accepted in option.items() if key not in value and "" not in accepted), None)
    if missing is not None:
        return _fail("value:dict_key", f"Missing dict key {missing!r}.")
    return _VALID


def _check_list_of_dicts(param: str, value: list[Any], options: Sequence[Any]) -> Verdict:
    verdict = _fail("value:list_dict", f"No possible answer given for the list of dicts {param!r}.")
    for option in options:
        if len(value) != len(option):
            verdict = _fail("value:list_dict_count", f"Wrong number of dicts in {param!r}: {len(value)}.")
            continue
        for item, accepted in zip(value, option, strict=True):
            verdict = _check_dict(param, item, [accepted])
            if not verdict.valid:
                break
        else:
            return _VALID
    return verdict
