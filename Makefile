# Two commands work on a fresh machine with only Python and make: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo test lint bench bench-gateway bench-soak fuzz clean copilot-cli mcp-servers coding-agents

$(VENV)/.base: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[cli]'
	touch $@

$(VENV)/.dev: $(VENV)/.base
	$(PY) -m pip install -q -e '.[dev,cli,serve,mcp]'
	$(PY) -m pip install -q -e '.[ray]' || echo "Ray could not be installed here: the Ray batch tests will skip"
	touch $@

demo: $(VENV)/.base
	$(PY) -m toolwire.demo

# One pytest worker per core (pytest-xdist); tests never share ports or files, so any order works.
test: $(VENV)/.dev copilot-cli mcp-servers coding-agents
	$(PY) -m pytest -n auto

# The real GitHub Copilot CLI for tests/copilot/test_real_cli.py (skipped, and said so, without npm).
copilot-cli:
	@sh tests/copilot/install_real_cli.sh

# The reference MCP servers from npm for tests/mcp (skipped, and said so, without npm).
mcp-servers:
	@sh tests/mcp/install_servers.sh

# Claude Code, Codex CLI and Gemini CLI for tests/gateway/test_coding_agents.py (skipped, and said so, without npm).
coding-agents:
	@sh tests/gateway/install_coding_agents.sh

lint: $(VENV)/.dev
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/ruff format --check src tests
	$(VENV)/bin/mypy --strict src/

# The decoders under a long mutation fuzz (the suite runs 5,000 inputs per codec; this 200,000).
fuzz: $(VENV)/.dev
	$(PY) -m tests.codecs._fuzz --count 200000

# Benchmarks side by side with the peers (LiteLLM, Pydantic AI, LangChain, OpenAI Agents) in their own venv.
bench:
	PYTHON=$(PYTHON) bash bench/setup_peers.sh
	bench/.venv-peers/bin/python bench/run.py

# The gateway (toolwire serve) against LiteLLM's proxy; LiteLLM lives in bench/.litellm-venv only.
bench-gateway: $(VENV)/.dev
	$(PY) -m pip install -q -e '.[serve]'
	PYTHON=$(PYTHON) bash bench/setup_litellm.sh
	$(PY) bench/gateway.py

# A bounded soak of toolwire serve under hostile traffic (loopback only, about 2 minutes).
bench-soak: $(VENV)/.dev
	$(PY) bench/gw_soak.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
