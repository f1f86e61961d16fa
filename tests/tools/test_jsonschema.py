from __future__ import annotations

import enum
from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import BaseModel, ConfigDict, Field

from toolwire.tools import Dependency, Depends, Tool, ToolContext, define_tool, tool
from toolwire.types import ToolDefinition


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    street: str
    title: str | None = Field(default=None, description="A property named title must survive.")


class Node(BaseModel):
    """A tree of labels."""

    label: str
    children: list[Node] = []


ROOT = Dependency("root", lambda: "/tmp")


def props(t: Tool) -> dict[str, Any]:
    properties: dict[str, Any] = t.parameters["properties"]
    return properties


def test_scalars_required_and_defaults() -> None:
    @tool
    def f(a: int, b: float, c: str = "x", d: bool = False) -> None:
        """Scalars."""

    assert f.parameters == {
        "additionalProperties": False,
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "number"},
            "c": {"default": "x", "type": "string"},
            "d": {"default": False, "type": "boolean"},
        },
        "required": ["a", "b"],
        "type": "object",
    }
    assert f.definition == ToolDefinition(name="f", description="Scalars.", parameters=f.parameters)


def test_literal() -> None:
    @tool
    def f(mode: Literal["fast", "slow"], only: Literal["x"] = "x") -> None: ...

    assert props(f) == {
        "mode": {"enum": ["fast", "slow"], "type": "string"},
        "only": {"const": "x", "default": "x", "type": "string"},
    }


def test_enums_go_to_defs_without_titles() -> None:
    @tool
    def f(color: Color, priority: Priority = Priority.LOW) -> None: ...

    assert f.parameters == {
        "$defs": {
            "Color": {"enum": ["red", "green"], "type": "string"},
            "Priority": {"enum": [1, 2], "type": "integer"},
        },
        "additionalProperties": False,
        "properties": {
            "color": {"$ref": "#/$defs/Color"},
            "priority": {"$ref": "#/$defs/Priority", "default": 1},
        },
        "required": ["color"],
        "type": "object",
    }


def test_optional_forms() -> None:
    @tool
    def f(a: Optional[int] = None, b: str | None = None, c: int | None = 3) -> None:  # noqa: UP045 -- Optional is the hint under test
        ...

    nullable_int = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert props(f) == {
        "a": {**nullable_int, "default": None},
        "b": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        "c": {**nullable_int, "default": 3},
    }
    assert "required" not in f.parameters


def test_lists_and_nested_models() -> None:
    @tool
    def f(tags: list[str], home: Address, others: list[Address] | None = None) -> None: ...

    assert f.parameters == {
        "$defs": {
            "Address": {
                "properties": {
                    "street": {"type": "string"},
                    "title": {
                        "anyOf": [{"type": "string"}, {"type": "null"}],
                        "default": None,
                        "description": "A property named title must survive.",
                    },
                },
                "required": ["street"],
                "type": "object",
            }
        },
        "additionalProperties": False,
        "properties": {
            "tags": {"items": {"type": "string"}, "type": "array"},
            "home": {"$ref": "#/$defs/Address"},
            "others": {
                "anyOf": [{"items": {"$ref": "#/$defs/Address"}, "type": "array"}, {"type": "null"}],
                "default": None,
            },
        },
        "required": ["tags", "home"],
        "type": "object",
    }


def test_annotated_field_wins_over_docstring_and_keeps_constraints() -> None:
    @tool
    def f(
        n: Annotated[int, Field(description="From Field.", ge=1, le=10)] = 5,
        m: int = Field(default=2, description="From default Field."),
        k: Annotated[str, Field(min_length=2)] = "ab",
    ) -> None:
        """Constrained.

        Args:
            n: From the docstring (ignored).
            m: Also ignored.
            k: From the docstring.
        """

    assert props(f) == {
        "n": {"default": 5, "description": "From Field.", "maximum": 10, "minimum": 1, "type": "integer"},
        "m": {"default": 2, "description": "From default Field.", "type": "integer"},
        "k": {"default": "ab", "description": "From the docstring.", "minLength": 2, "type": "string"},
    }


@pytest.mark.parametrize(
    "doc",
    [
        "Greet.\n\nArgs:\n    name: Who to greet.\n",
        "Greet.\n\nParameters\n----------\nname : str\n    Who to greet.\n",
        "Greet.\n\n:param name: Who to greet.\n",
    ],
    ids=["google", "numpy", "rest"],
)
def test_docstring_styles_give_descriptions(doc: str) -> None:
    def greet(name: str) -> str:
        return name

    greet.__doc__ = doc
    t = tool(greet)
    assert t.description == "Greet."
    assert props(t) == {"name": {"description": "Who to greet.", "type": "string"}}


def test_injected_parameters_are_absent_from_schema() -> None:
    @tool
    def f(path: str, ctx: ToolContext, root: str = Depends(ROOT), maybe: ToolContext | None = None) -> None: ...

    assert f.parameters == {
        "additionalProperties": False,
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
        "type": "object",
    }


def test_no_parameters_and_unannotated() -> None:
    @tool
    def none() -> str:
        return ""

    @tool
    def loose(x, y=1):  # type: ignore[no-untyped-def]
        return x

    assert none.parameters == {"additionalProperties": False, "properties": {}, "type": "object"}
    assert props(loose) == {"x": {}, "y": {"default": 1}}
    assert none.description is None


def test_reserved_names_keep_their_names() -> None:
    @tool
    def f(json: str, model_name: str = "m", schema: int = 0) -> None: ...

    assert props(f) == {
        "json": {"type": "string"},
        "model_name": {"default": "m", "type": "string"},
        "schema": {"default": 0, "type": "integer"},
    }
    assert f.parameters["required"] == ["json"]


def test_decorator_options() -> None:
    @tool(name="search-docs", description="Custom.", risk="low")
    async def f(q: str) -> str:
        """Docstring summary loses to description=."""
        return q

    assert (f.name, f.description, f.risk) == ("search-docs", "Custom.", "low")
    assert tool(lambda: None, name="anon").risk == "high"


def test_invalid_name_and_risk() -> None:
    with pytest.raises(ValueError, match=r"Tool name 'bad name' is invalid"):
        tool(name="bad name")(lambda: None)
    with pytest.raises(ValueError, match=r"Tool name '<lambda>' is invalid"):
        tool(lambda: None)
    with pytest.raises(ValueError, match=r"Tool 'f': risk 'medium' is not one of 'low', 'high'"):
        tool(name="f", risk="medium")(lambda: None)  # type: ignore[call-overload]


def test_nameless_callable_needs_a_name() -> None:
    import functools

    def add(a: int, b: int) -> int:
        return a + b

    with pytest.raises(ValueError, match=r"has no __name__; pass name=\.$"):
        tool(functools.partial(add, b=1))
    assert tool(functools.partial(add, b=1), name="inc").parameters == {
        "additionalProperties": False,
        "properties": {"a": {"type": "integer"}, "b": {"default": 1, "type": "integer"}},
        "required": ["a"],
        "type": "object",
    }


def test_variadic_and_generators_rejected() -> None:
    def star(*args: int) -> None: ...

    def gen() -> Any:
        yield 1

    with pytest.raises(TypeError, match=r"Tool 'star': parameter 'args' is variadic"):
        tool(star)
    with pytest.raises(TypeError, match=r"Tool 'gen': generators are not supported"):
        tool(gen)


def test_unresolvable_hint_names_the_tool() -> None:
    def f(x: Missing) -> None: ...  # type: ignore[name-defined]  # noqa: F821 -- the unresolvable hint under test

    with pytest.raises(TypeError, match=r"Tool 'f': cannot resolve the type hints"):
        tool(f)


class SearchInput(BaseModel):
    """Search the web.

    More text that is not the summary.
    """

    query: str = Field(description="What to look for.")
    limit: int = 5


def test_define_tool_schema_and_description() -> None:
    t = define_tool(name="search", input=SearchInput, execute=lambda data: data.query, risk="low")
    assert t.definition == ToolDefinition(
        name="search",
        description="Search the web.",
        parameters={
            "additionalProperties": False,
            "properties": {
                "query": {"description": "What to look for.", "type": "string"},
                "limit": {"default": 5, "type": "integer"},
            },
            "required": ["query"],
            "type": "object",
        },
    )
    assert t.risk == "low"
    assert issubclass(t.input_model, SearchInput)


def test_define_tool_recursive_model_is_an_object_at_top() -> None:
    t = define_tool(name="tree", description="Trees.", input=Node, execute=lambda data: None)
    assert t.parameters == {
        "$defs": {
            "Node": {
                "description": "A tree of labels.",
                "properties": {
                    "label": {"type": "string"},
                    "children": {"default": [], "items": {"$ref": "#/$defs/Node"}, "type": "array"},
                },
                "required": ["label"],
                "type": "object",
            }
        },
        "additionalProperties": False,
        "properties": {
            "label": {"type": "string"},
            "children": {"default": [], "items": {"$ref": "#/$defs/Node"}, "type": "array"},
        },
        "required": ["label"],
        "type": "object",
    }


class Loose(BaseModel):
    model_config = ConfigDict(extra="allow")
    a: int


def test_define_tool_respects_explicit_extra() -> None:
    t = define_tool(name="loose", description="x", input=Loose, execute=lambda data: None)
    assert t.input_model is Loose
    assert t.parameters["additionalProperties"] is True


def test_define_tool_rejects_bad_input_and_execute() -> None:
    with pytest.raises(TypeError, match=r"Tool 'x': input must be a Pydantic model class"):
        define_tool(name="x", input=dict, execute=lambda data: None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Tool 'x': execute parameter 'other' cannot be supplied"):
        define_tool(name="x", input=SearchInput, execute=lambda data, ctx, other: None)
    with pytest.raises(TypeError, match=r"Tool 'x': execute must take the validated input"):
        define_tool(name="x", input=SearchInput, execute=lambda: None)
