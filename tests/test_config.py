from __future__ import annotations

from pathlib import Path

import pytest

from toolwire.config import AgentSettings, Config, ConfigError, ProviderSettings, find_config, load_config

FULL = """\
[provider]
name = "vllm"
model = "Qwen/Qwen3-8B"
base_url = "http://localhost:8000/v1"
api_key_env = "MY_KEY"

[agent]
max_tool_turns = 4
tool_mode = "text"
output_budget_chars = 20000
system_prompt = "Be brief."
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_full_file_is_read_into_typed_settings(tmp_path: Path) -> None:
    path = write(tmp_path / "toolwire.toml", FULL)
    assert load_config(path) == Config(
        provider=ProviderSettings(
            name="vllm", model="Qwen/Qwen3-8B", base_url="http://localhost:8000/v1", api_key_env="MY_KEY"
        ),
        agent=AgentSettings(max_tool_turns=4, tool_mode="text", output_budget_chars=20000, system_prompt="Be brief."),
        path=path,
    )


def test_missing_sections_and_keys_keep_the_defaults(tmp_path: Path) -> None:
    path = write(tmp_path / "toolwire.toml", '[provider]\nname = "ollama"\n')
    config = load_config(path)
    assert config.provider == ProviderSettings(name="ollama")
    assert config.agent == AgentSettings(max_tool_turns=10, tool_mode="auto", output_budget_chars=None)


def test_no_file_anywhere_gives_the_defaults(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert find_config(tmp_path, env) is None
    assert load_config(cwd=tmp_path, env=env) == Config()


def test_the_current_directory_wins_over_the_user_folder(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    user = write(tmp_path / "xdg" / "toolwire" / "toolwire.toml", '[provider]\nname = "anthropic"\n')
    project = tmp_path / "project"
    project.mkdir()
    assert find_config(project, env) == user
    assert load_config(cwd=project, env=env).provider.name == "anthropic"
    local = write(project / "toolwire.toml", '[provider]\nname = "gemini"\n')
    assert find_config(project, env) == local
    assert load_config(cwd=project, env=env).provider.name == "gemini"


def test_home_config_folder_is_used_without_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    user = write(tmp_path / "home" / ".config" / "toolwire" / "toolwire.toml", "[agent]\nmax_tool_turns = 3\n")
    assert find_config(tmp_path, {}) == user


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[provider]\nnmae = "x"\n',
            "Unknown key 'provider.nmae' in {path!r}; [provider] may hold: name, model, base_url, api_key_env, "
            "copilot_byok, copilot_wire_api, copilot_record.",
        ),
        (
            '[provider]\ncopilot_byok = "gemini"\n',
            "'provider.copilot_byok' in {path!r} must be one of 'openai', 'azure', 'anthropic', got 'gemini' "
            "(a string).",
        ),
        (
            "[agent]\nmax_turns = 3\n",
            "Unknown key 'agent.max_turns' in {path!r}; [agent] may hold: max_tool_turns, tool_mode, "
            "output_budget_chars, system_prompt.",
        ),
        (
            "[agents]\nmax_tool_turns = 3\n",
            "Unknown key 'agents' in {path!r}; the file has the sections [provider], [agent], [[route]], [[mcp]].",
        ),
        (
            'model = "x"\n',
            "Unknown key 'model' in {path!r}; the file has the sections [provider], [agent], [[route]], [[mcp]].",
        ),
        (
            'provider = "openai"\n',
            "'provider' in {path!r} must be a section ([provider]), got 'openai' (a string).",
        ),
        (
            '[agent]\nmax_tool_turns = "10"\n',
            "'agent.max_tool_turns' in {path!r} must be an integer >= 0, got '10' (a string).",
        ),
        (
            "[agent]\nmax_tool_turns = -1\n",
            "'agent.max_tool_turns' in {path!r} must be an integer >= 0, got -1 (an integer).",
        ),
        (
            "[agent]\nmax_tool_turns = true\n",
            "'agent.max_tool_turns' in {path!r} must be an integer >= 0, got True (a boolean).",
        ),
        (
            '[agent]\ntool_mode = "json"\n',
            "'agent.tool_mode' in {path!r} must be one of 'native', 'text', 'auto', 'constrained', "
            "got 'json' (a string).",
        ),
        (
            "[agent]\noutput_budget_chars = 0\n",
            "'agent.output_budget_chars' in {path!r} must be an integer >= 1, got 0 (an integer).",
        ),
        (
            "[agent]\noutput_budget_chars = 1.5\n",
            "'agent.output_budget_chars' in {path!r} must be an integer >= 1, got 1.5 (a number).",
        ),
        (
            "[provider]\nmodel = 3\n",
            "'provider.model' in {path!r} must be a non-empty string, got 3 (an integer).",
        ),
        (
            '[provider]\nname = ""\n',
            "'provider.name' in {path!r} must be a non-empty string, got '' (a string).",
        ),
        (
            "[provider]\nbase_url = [1]\n",
            "'provider.base_url' in {path!r} must be a non-empty string, got [1] (an array).",
        ),
    ],
)
def test_bad_keys_and_types_name_the_key_and_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "toolwire.toml", text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == message.format(path=str(path))


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "toolwire.toml", "[provider\nname = 1\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"The settings file {str(path)!r} is not valid TOML: ")


def test_unreadable_file_is_a_config_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError) as caught:
        load_config(missing)
    assert str(caught.value) == f"Cannot read the settings file {str(missing)!r}: No such file or directory."
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\xff\xfe[agent]")
    with pytest.raises(ConfigError) as caught:
        load_config(binary)
    assert str(caught.value) == f"The settings file {str(binary)!r} is not UTF-8 text; save it as UTF-8."


ROUTES = """\
[[route]]
model = "claude-*"
target = "vllm:Qwen/Qwen3-8B"
base_url = "http://localhost:8000/v1"
api_key_env = "VLLM_KEY"
tool_mode = "auto"

[[route]]
model = "*"
target = "ollama:qwen3"
"""


def test_route_tables_are_read_in_order(tmp_path: Path) -> None:
    from toolwire.config import RouteSettings

    path = write(tmp_path / "toolwire.toml", ROUTES)
    assert load_config(path).routes == (
        RouteSettings(
            model="claude-*",
            target="vllm:Qwen/Qwen3-8B",
            base_url="http://localhost:8000/v1",
            api_key_env="VLLM_KEY",
            tool_mode="auto",
        ),
        RouteSettings(model="*", target="ollama:qwen3"),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[[route]]\nmodel = "x"\n',
            "[[route]] 1 in {path!r} needs target (or [[route.targets]] tables, for several upstreams).",
        ),
        (
            '[[route]]\nmodel = "x"\ntarget = "ollama:q"\nmode = "text"\n',
            "Unknown key 'mode' in [[route]] 1 of {path!r}; known: model, target, base_url, api_key_env, tool_mode, "
            "timeout, strategy, cooldown, targets, parallel.",
        ),
        (
            '[[route]]\nmodel = "x"\ntarget = "ollama:q"\ntool_mode = "json"\n',
            "'tool_mode' of [[route]] 1 in {path!r} must be one of 'native', 'text', 'auto', 'constrained', "
            "got 'json' (a string).",
        ),
        ('route = "x"\n', "'route' in {path!r} must be an array of tables ([[route]]), got 'x' (a string)."),
        (
            '[[route]]\nmodel = "x"\nstrategy = "balance"\n[[route.targets]]\ntarget = "ollama:a"\nweight = inf\n',
            "[[route]] 1 in {path!r}: Target 'ollama:a': weight must be a number from more than 0 to 1e+06, got inf.",
        ),
        (
            '[[route]]\nmodel = "x"\n[[route.targets]]\ntarget = "ollama:a"\nweight = 1e308\n',
            "[[route]] 1 in {path!r}: Target 'ollama:a': weight must be a number from more than 0 to 1e+06, "
            "got 1e+308.",
        ),
        (
            '[[route]]\nmodel = "x"\ntarget = "ollama:q"\ncooldown = 1e300\n',
            "[[route]] 1 in {path!r}: Route 'x': cooldown must be a number from 0 to 3600, got 1e+300.",
        ),
        (
            '[[route]]\nmodel = "x"\ntarget = "ollama:q"\ncooldown = nan\n',
            "'cooldown' of [[route]] 1 in {path!r} must be a number of seconds > 0, got nan (a number).",
        ),
        (
            '[[route]]\nmodel = "x"\ntarget = "ollama:q"\ntimeout = inf\n',
            "[[route]] 1 in {path!r}: Route 'x': timeout must be a number from more than 0 to 3600, got inf.",
        ),
    ],
)
def test_bad_route_tables_name_the_key_and_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "toolwire.toml", text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == message.format(path=str(path))


def test_the_route_tables_accept_exactly_the_declared_fields() -> None:
    from dataclasses import fields

    from toolwire import config
    from toolwire.routes import RouteSettings, TargetSettings

    assert list(config._ROUTE) == [f.name for f in fields(RouteSettings)]
    assert list(config._TARGET) == [f.name for f in fields(TargetSettings)]


def test_the_default_time_to_first_byte_is_well_under_the_sdks_600_s() -> None:
    from toolwire.routes import RouteSettings, TargetSettings

    assert RouteSettings("m", "ollama:q").timeout == TargetSettings("ollama:q").timeout == 120.0


def test_a_route_timeout_reaches_its_targets(tmp_path: Path) -> None:
    from toolwire.gateway import Router

    path = tmp_path / "toolwire.toml"
    path.write_text(
        '[[route]]\nmodel = "one"\ntarget = "ollama:q"\ntimeout = 5\n'
        '[[route]]\nmodel = "two"\ntool_mode = "text"\ntimeout = 7\n'
        '[[route.targets]]\ntarget = "ollama:a"\n[[route.targets]]\ntarget = "ollama:b"\ntimeout = 9\n',
        encoding="utf-8",
    )
    router = Router(load_config(path).routes)
    assert [[(t.timeout, t.tool_mode) for t in r.targets] for r in router.routes] == [
        [(5, "native")],
        [(7, "text"), (9, "text")],
    ]
