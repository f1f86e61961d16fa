# Two commands work on a fresh machine with only Python and make: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo docs test e2e e2e-server local-model lint bench bench-gateway bench-soak fuzz clean copilot-cli mcp-servers coding-agents

$(VENV)/.base: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[cli]'
	touch $@

$(VENV)/.dev: $(VENV)/.base
	$(PY) -m pip install -q -e '.[dev,cli,serve,mcp,docs]'
	# BFCL's questions and answers for toolwire eval and tests/evals: only its data files are read.
	$(PY) -m pip install -q --no-deps bfcl-eval==2026.3.23
	$(PY) -m pip install -q -e '.[ray]' || echo "Ray could not be installed here: the Ray batch tests will skip"
	touch $@

demo: $(VENV)/.base
	$(PY) -m toolwire.demo

# One pytest worker per core (pytest-xdist); tests never share ports or files, so any order works.
test: $(VENV)/.dev copilot-cli mcp-servers coding-agents
	$(PY) -m pytest -n auto

# A real model: SmolLM2-135M-Instruct on llama-cpp-python's server (tests/e2e; not part of `make test`).
# The first run builds llama-cpp-python into ~/.cache/toolwire/wheels (4-14 min on 2 cores).
# pytest's exit 5 (nothing collected) fails too: a CI that runs no real-model test must not pass.
e2e: $(VENV)/.dev e2e-server
	@status=0; $(PY) -m pytest -m e2e tests/e2e -rA || status=$$?; \
	if [ $$status -eq 5 ]; then echo "make e2e: no real-model test was collected (pytest exit 5)"; status=1; fi; \
	exit $$status

e2e-server:
	@PYTHON=$(PYTHON) sh tests/e2e/install_server.sh

# SmolLM2-135M-Instruct on llama-cpp-python at http://127.0.0.1:8000/v1, in the foreground (README:
# "Run it against a local model"). CHAT_FORMAT=chatml for text mode (the default format escapes HTML).
CHAT_FORMAT ?= chatml-function-calling
local-model: $(VENV)/.base e2e-server
	$(PY) -m tests.e2e.llama_server $(CHAT_FORMAT) 8000

# The real GitHub Copilot CLI for tests/copilot/test_real_cli.py (skipped, and said so, without npm).
copilot-cli:
	@sh tests/copilot/install_real_cli.sh

# The reference MCP servers from npm for tests/mcp (skipped, and said so, without npm).
mcp-servers:
	@sh tests/mcp/install_servers.sh

# Claude Code, Codex CLI and Gemini CLI for tests/gateway/test_coding_agents.py (skipped, and said so, without npm).
coding-agents:
	@sh tests/gateway/install_coding_agents.sh

# The design and the API reference (docs/, mkdocs.yml) as a site in site/; any warning fails the
# build (--strict), as it fails tests/test_docs.py. NO_MKDOCS_2_WARNING: mkdocs-material's notice.
docs: $(VENV)/.dev
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

lint: $(VENV)/.dev
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/ruff format --check src tests
	$(VENV)/bin/mypy --strict src/

# The decoders under a long mutation fuzz (the suite runs 5,000 inputs per codec; this 200,000),
# then what decoded re-encoded by all five codecs (the suite runs 300 per codec; this 20,000);
# the file tools against directory swaps; hostile upstreams (nesting, cut strings, garbage, resets,
# extreme headers and Retry-After values, random cuts) through every tool mode and both gateway paths.
fuzz: $(VENV)/.dev
	$(PY) -m tests.codecs._fuzz --count 200000
	$(PY) -m tests.codecs._fuzz --count 20000 --reencode
	TOOLWIRE_RACE_SWAPS=50000 $(PY) -m pytest -q tests/stdtools/test_hostile.py -k "swapping or swapped"
	TOOLWIRE_HOSTILE_ROUNDS=400 $(PY) -m pytest -q tests/gateway/test_hostile_upstreams.py

# Benchmarks side by side with the peers (LiteLLM, Pydantic AI, LangChain, OpenAI Agents) in their own venv.
bench:
	PYTHON=$(PYTHON) bash bench/micro/setup_peers.sh
	bench/.venv-peers/bin/python -m bench.micro.vs_peers

# The gateway (toolwire serve) against LiteLLM's proxy; LiteLLM lives in bench/.litellm-venv only.
bench-gateway: $(VENV)/.dev
	$(PY) -m pip install -q -e '.[serve]'
	PYTHON=$(PYTHON) bash bench/gateway/setup_litellm.sh
	bash bench/gateway/setup_portkey.sh
	$(PY) -m bench.gateway.vs_litellm

# A bounded soak of toolwire serve under hostile traffic (loopback only, about 2 minutes).
bench-soak: $(VENV)/.dev
	$(PY) -m bench.gateway.soak

clean:
	rm -rf $(VENV) .venv-e2e .pytest_cache .mypy_cache .ruff_cache site
