"""The typed-output suite's cases: extraction and classification with known answers (110, written here).

Four kinds, each a small output type a model fills from one short text:

- `sentiment` (30): a review's sentiment, `positive`, `negative` or `neutral` (a `Literal`);
- `person` (30): a person's name, age and city, from a sentence that states them;
- `order` (30): the item, quantity and whether delivery is express, from an order note;
- `number` (20): the one amount a sentence gives, as a bare integer (a scalar output type).

The texts are written for the suite (no public set is copied), each states its answer plainly,
so exact-match accuracy measures reading, not knowledge. Person and order texts come from fixed
lists in fixed templates: the same 110 cases every run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = ["KINDS", "OutputCase", "output_cases"]


class Sentiment(BaseModel):
    """The sentiment of a review."""

    sentiment: Literal["positive", "negative", "neutral"]


class Person(BaseModel):
    """A person the text describes."""

    name: str = Field(description="The person's first name")
    age: int = Field(description="Age in years")
    city: str = Field(description="The city they live in")


class Order(BaseModel):
    """An order placed in the text."""

    item: str = Field(description="What is ordered, singular or plural as written")
    quantity: int = Field(description="How many")
    express: bool = Field(description="Whether express delivery is asked for")


KINDS: dict[str, Any] = {"sentiment": Sentiment, "person": Person, "order": Order, "number": int}
"""Kind -> the output type its cases ask for."""

_INSTRUCTIONS = {
    "sentiment": "What is the sentiment of this review?",
    "person": "Extract the person's name, age and city.",
    "order": "Extract the ordered item, the quantity and whether delivery is express.",
    "number": "What is the amount in this sentence? Answer with the number only.",
}

_REVIEWS = [
    ("I love this phone, the battery lasts for days.", "positive"),
    ("The pizza was cold and the delivery took two hours.", "negative"),
    ("The package arrived on Tuesday.", "neutral"),
    ("Fantastic service, the staff were friendly and quick.", "positive"),
    ("This is the worst hotel I have ever stayed in.", "negative"),
    ("The store opens at nine in the morning.", "neutral"),
    ("Great book, I could not put it down.", "positive"),
    ("The headphones broke after one day. Terrible.", "negative"),
    ("The manual has twelve pages.", "neutral"),
    ("Excellent coffee and a wonderful view.", "positive"),
    ("I hate how slow this laptop is.", "negative"),
    ("The train leaves from platform four.", "neutral"),
    ("Absolutely wonderful concert, the best night of the year.", "positive"),
    ("Awful food, rude waiter, never again.", "negative"),
    ("The shirt is blue and made of cotton.", "neutral"),
    ("I am very happy with my new bike.", "positive"),
    ("The app keeps crashing and support never answers. Very disappointing.", "negative"),
    ("The meeting is scheduled for Friday.", "neutral"),
    ("Lovely garden, beautiful flowers, great visit.", "positive"),
    ("The room was dirty and smelled bad.", "negative"),
    ("The museum is on the corner of Main Street.", "neutral"),
    ("Best purchase I made this year, highly recommended.", "positive"),
    ("Broken on arrival and the refund was refused. Horrible.", "negative"),
    ("The box contains two cables and a charger.", "neutral"),
    ("The movie was amazing and the actors were brilliant.", "positive"),
    ("Bad quality, the paint peeled off in a week.", "negative"),
    ("The library closes at six.", "neutral"),
    ("Perfect fit and very comfortable shoes. I love them.", "positive"),
    ("Terrible experience, I want my money back.", "negative"),
    ("The bus number is 42.", "neutral"),
]

_NAMES = ["Alice", "Bruno", "Chen", "Dana", "Emil", "Fatima", "Goran", "Hana", "Ivan", "Julia"]
_CITIES = ["Paris", "Berlin", "Madrid", "Tokyo", "Lima", "Oslo", "Cairo", "Dublin", "Rome", "Seoul"]
_PERSON_TEMPLATES = [
    "{name} is {age} years old and lives in {city}.",
    "Meet {name}, a {age}-year-old from {city}.",
    "My neighbour {name} lives in {city}. {name} is {age}.",
]

_ITEMS = ["lamps", "chairs", "notebooks", "mugs", "towels", "pencils", "plates", "candles", "pillows", "batteries"]
_ORDER_TEMPLATES = [
    ("Please send {quantity} {item} with express delivery.", True),
    ("I would like to order {quantity} {item}. Standard shipping is fine.", False),
    ("Order: {quantity} {item}, express shipping please.", True),
]

_NUMBERS = [
    ("The invoice total is {n} euros.", 120),
    ("We counted {n} birds in the park.", 37),
    ("The bridge is {n} meters long.", 850),
    ("The class has {n} students.", 28),
    ("Tickets cost {n} dollars each.", 15),
    ("The package weighs {n} grams.", 640),
    ("She ran {n} kilometers this week.", 42),
    ("The library owns {n} books.", 5300),
    ("The recipe needs {n} eggs.", 3),
    ("The flight was delayed by {n} minutes.", 95),
    ("There are {n} apartments in the building.", 64),
    ("The car costs {n} pounds.", 18000),
    ("He scored {n} points in the game.", 31),
    ("The pool holds {n} liters.", 2500),
    ("The hike took {n} hours.", 7),
    ("Our team has {n} members.", 12),
    ("The garden has {n} trees.", 19),
    ("The phone has {n} gigabytes of storage.", 256),
    ("The museum gets {n} visitors a day.", 1400),
    ("The parcel travelled {n} miles.", 310),
]


@dataclass(frozen=True, slots=True)
class OutputCase:
    """One question: the text, the output type's kind, and the answer as JSON values.

    Attributes:
        id: `<kind>_<n>`.
        kind: A key of `KINDS`.
        prompt: What the model is asked (an instruction and the text).
        expected: The answer as the output type's JSON form.
    """

    id: str
    kind: str
    prompt: str
    expected: Any

    @property
    def output_type(self) -> Any:
        """The Python type the answer must validate as."""
        return KINDS[self.kind]


def output_cases() -> list[OutputCase]:
    """Every case, kinds interleaved (so a `--limit` run covers them all), in a fixed order."""
    by_kind = {
        "sentiment": [_case("sentiment", i, text, {"sentiment": label}) for i, (text, label) in enumerate(_REVIEWS)],
        "person": [_person(i) for i in range(30)],
        "order": [_order(i) for i in range(30)],
        "number": [_case("number", i, text.format(n=n), n) for i, (text, n) in enumerate(_NUMBERS)],
    }
    longest = max(len(cases) for cases in by_kind.values())
    return [cases[i] for i in range(longest) for cases in by_kind.values() if i < len(cases)]


def _case(kind: str, index: int, text: str, expected: Any) -> OutputCase:
    return OutputCase(id=f"{kind}_{index}", kind=kind, prompt=f"{_INSTRUCTIONS[kind]}\n\n{text}", expected=expected)


def _person(index: int) -> OutputCase:
    name, city = _NAMES[index % len(_NAMES)], _CITIES[(index * 3) % len(_CITIES)]
    age = 19 + (index * 7) % 60
    text = _PERSON_TEMPLATES[index % len(_PERSON_TEMPLATES)].format(name=name, age=age, city=city)
    return _case("person", index, text, {"name": name, "age": age, "city": city})


def _order(index: int) -> OutputCase:
    item = _ITEMS[index % len(_ITEMS)]
    quantity = 2 + (index * 5) % 23
    template, express = _ORDER_TEMPLATES[index % len(_ORDER_TEMPLATES)]
    text = template.format(quantity=quantity, item=item)
    return _case("order", index, text, {"item": item, "quantity": quantity, "express": express})
