"""Benchmarks: the Berkeley Function Calling Leaderboard's data and AST rules; the typed-output suite.

The typed-output suite (`toolwire eval output`, bench/outputs) lives in `_output_cases` (110
extraction and classification questions with known answers) and `_output_suite` (asking and
scoring them in each output strategy); not imported here, as they load pydantic.

`load_cases` reads BFCL's questions and possible answers from the `bfcl-eval` package's files
(`pip install --no-deps bfcl-eval`), `check_calls` scores an answer by BFCL's AST rules.
"""

from __future__ import annotations

from toolwire.evals._bfcl_checker import Verdict, check_calls, standardize
from toolwire.evals._bfcl_data import (
    CATEGORIES,
    DEFAULT_CATEGORIES,
    BfclCase,
    BfclDataError,
    bfcl_data_dir,
    load_cases,
    to_json_schema,
)

__all__ = [
    "CATEGORIES",
    "DEFAULT_CATEGORIES",
    "BfclCase",
    "BfclDataError",
    "Verdict",
    "bfcl_data_dir",
    "check_calls",
    "load_cases",
    "standardize",
    "to_json_schema",
]
