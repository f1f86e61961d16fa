"""toolwire's BFCL AST checker against bfcl_eval's own, on the same model outputs: they must agree on every one.

Run in the bench-only environment (bench/bfcl/setup.sh makes bench/.venv-bfcl: toolwire plus
`bfcl-eval --no-deps`):

    bench/.venv-bfcl/bin/python -m bench.bfcl.crosscheck [--limit 100] [--seed 7] [--from eval.json ...]

Outputs are (a) answers derived from each case's possible answers, right and deliberately wrong
in every way the rules care about (seeded, so the same run gives the same outputs), and (b) the
calls recorded in `toolwire eval --json` files (real model outputs). bfcl_eval's checker module
imports every model handler through `constants.model_config` (and with it dozens of SDKs); only
its `MODEL_CONFIG_MAPPING` is used, for dotted names, so a stub stands in for that one module and
BFCL's checker code runs unchanged.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import types
from collections import Counter
from pathlib import Path
from typing import Any

from toolwire.evals import CATEGORIES, DEFAULT_CATEGORIES, check_calls, load_cases


def _bfcl_checker() -> Any:
    class _Config:
        underscore_to_dot = False  # names reach both checkers in BFCL's own spelling

    stub = types.ModuleType("bfcl_eval.constants.model_config")
    stub.MODEL_CONFIG_MAPPING = {}  # type: ignore[attr-defined]
    stub.MODEL_CONFIG_MAPPING = type("M", (dict,), {"__missing__": lambda self, key: _Config()})()  # type: ignore[attr-defined]
    sys.modules["bfcl_eval.constants.model_config"] = stub
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
    from bfcl_eval.utils import is_empty_output

    def check(category: str, functions: list[dict[str, Any]], calls: list[dict[str, Any]], answer: list[Any]) -> bool:
        if "irrelevance" in category:  # eval_runner's relevance rule: no call decoded
            return bool(is_empty_output(calls))
        if "relevance" in category:  # live_relevance: any call decoded
            return not is_empty_output(calls)
        language = Language.JAVA if category.endswith("java") else Language.PYTHON
        language = Language.JAVASCRIPT if category.endswith("javascript") else language
        return bool(ast_checker(functions, calls, answer, language, category, "stub")["valid"])

    return check


# Outputs derived from the possible answers.


def _pick(options: list[Any], rng: random.Random) -> tuple[bool, Any]:
    """(given, value): one accepted value, or leave the parameter out when that is accepted."""
    if "" in options and rng.random() < 0.5:
        return False, None
    chosen = rng.choice([o for o in options if o != ""] or [""])
    return chosen != "", copy.deepcopy(chosen)


def _right_call(expected: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    name, answers = next(iter(expected.items()))
    arguments = {}
    for param, options in answers.items():
        given, value = _pick(options, rng)
        if given:
            arguments[param] = value
    return {name: arguments}


def _respell(value: Any, rng: random.Random) -> Any:
    if isinstance(value, str):
        return rng.choice([value.upper(), value.replace(" ", "_"), f" {value}.", value + "x", value.replace("'", '"')])
    if isinstance(value, bool):
        return rng.choice([not value, int(value), str(value)])
    if isinstance(value, int):
        return rng.choice([value + 1, float(value), str(value), -value])
    if isinstance(value, float):
        return rng.choice([int(value), value + 0.5, str(value)])
    if isinstance(value, list):
        return rng.choice([value[::-1], value[:-1], [*value, value[0]] if value else [1], [str(v) for v in value]])
    if isinstance(value, dict) and value:
        key = rng.choice(list(value))
        return rng.choice([{k: v for k, v in value.items() if k != key}, {**value, key: _respell(value[key], rng)}])
    return value


def _mutate(call: dict[str, Any], functions: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    name, arguments = next(iter(call.items()))
    arguments = dict(arguments)
    kind = rng.choice(["respell", "respell", "drop", "extra", "rename", "int-float", "none"])
    if kind == "respell" and arguments:
        key = rng.choice(list(arguments))
        arguments[key] = _respell(arguments[key], rng)
    elif kind == "drop" and arguments:
        del arguments[rng.choice(list(arguments))]
    elif kind == "extra":
        arguments["verbose"] = True
    elif kind == "rename":
        others = [f["name"] for f in functions if f["name"] != name]
        name = rng.choice(others) if others else name + "_v2"
    elif kind == "int-float":
        arguments = {
            k: (float(v) if type(v) is int else int(v) if type(v) is float else v) for k, v in arguments.items()
        }
    return {name: arguments}


def _outputs(case: Any, rng: random.Random) -> list[list[dict[str, Any]]]:
    if "irrelevance" in case.category:
        function = case.functions[0]
        some = {p: "x" for p in function["parameters"].get("required", [])}
        return [[], [{function["name"]: some}], [{}]]
    right = [_right_call(expected, rng) for expected in case.possible_answer]
    outputs = [right, [_right_call(e, rng) for e in case.possible_answer][::-1]]
    for _ in range(3):
        wrong = [dict(c) for c in right]
        i = rng.randrange(len(wrong))
        wrong[i] = _mutate(wrong[i], case.functions, rng)
        outputs.append(wrong)
    outputs.append([*right, right[0]] if rng.random() < 0.5 else right[1:])
    outputs.append([])
    return outputs


def _recorded(paths: list[Path]) -> list[tuple[str, str, list[dict[str, Any]]]]:
    found = []
    for path in paths:
        report = json.loads(path.read_text(encoding="utf-8"))
        found.extend((r["category"], r["id"], r["calls"]) for r in report["results"])
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=100, help="cases per category (100)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--from", dest="recorded", type=Path, nargs="*", default=[], help="toolwire eval --json files")
    args = parser.parse_args()
    bfcl = _bfcl_checker()
    rng = random.Random(args.seed)
    recorded = _recorded(args.recorded)
    unknown = sorted({category for category, _, _ in recorded} - set(CATEGORIES))
    if unknown:
        parser.error(f"--from holds categories toolwire eval does not score: {', '.join(unknown)}")
    derived = [c for c in load_cases(DEFAULT_CATEGORIES, limit=args.limit)]
    work = [(case, calls, "derived") for case in derived for calls in _outputs(case, rng)]
    wanted = sorted({category for category, _, _ in recorded})
    cases = {case.id: case for case in load_cases(wanted)}  # every case of each recorded category
    missing = [case_id for _, case_id, _ in recorded if case_id not in cases]
    if missing:
        parser.error(f"--from holds {len(missing)} case ids the BFCL data lack, e.g. {missing[0]!r}")
    work += [(cases[case_id], calls, "recorded") for _, case_id, calls in recorded]
    checked: Counter[str] = Counter()
    disagreements = []
    for case, calls, source in work:
        ours = check_calls(case.category, case.functions, calls, case.possible_answer).valid
        theirs = bfcl(case.category, case.functions, copy.deepcopy(calls), case.possible_answer)
        checked[f"{source} {case.category} {'valid' if theirs else 'invalid'}"] += 1
        if ours != theirs:
            disagreements.append((case.id, calls, ours, theirs))
    for key in sorted(checked):
        print(f"{key:40} {checked[key]:5}")
    print(f"checked {sum(checked.values())} outputs: {len(disagreements)} disagreements")
    for case_id, calls, ours, theirs in disagreements[:20]:
        print(f"  {case_id}: toolwire {ours}, bfcl {theirs}: {json.dumps(calls)[:300]}")
    return 1 if disagreements else 0


if __name__ == "__main__":
    raise SystemExit(main())
