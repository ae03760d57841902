"""The Pydantic models every Python source is generated from, with valid replies.

Each entry of MODELS is (name, model class, [valid replies as Python values]).
The models are what people write for structured outputs: one category of
JSON Schema each, plus a few realistic ones that mix them.
"""
from __future__ import annotations

import datetime as dt
import decimal
import enum
import uuid
from typing import Annotated, Literal, Optional, Union

from pydantic import AnyUrl, BaseModel, ConfigDict, EmailStr, Field, HttpUrl


class Plate(BaseModel):
    """A yes/no gate: is a product in frame."""
    model_config = ConfigDict(extra="forbid")
    productPresent: bool = Field(
        json_schema_extra={"x-vouch": {"findings": [{"when": {"const": True}, "message": "a product is still in frame"}]}}
    )
    productTextPresent: bool
    garbledText: bool


class Optionals(BaseModel):
    name: str
    nickname: Optional[str] = None
    age: int | None = None


class NullableRequired(BaseModel):
    value: int | None
    note: str | None


class Address(BaseModel):
    street: str
    city: str
    postcode: str


class Person(BaseModel):
    name: str
    address: Address
    previous: list[Address] = []


class Lists(BaseModel):
    tags: list[str]
    scores: Annotated[list[float], Field(min_length=1, max_length=5)]
    matrix: list[list[int]]


class Color(str, enum.Enum):
    red = "red"
    green = "green"
    blue = "blue"


class Priority(enum.IntEnum):
    low = 1
    medium = 2
    high = 3


class Enums(BaseModel):
    color: Color
    priority: Priority


class Literals(BaseModel):
    status: Literal["ok", "error"]
    version: Literal[2]
    flag: Literal[True]


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class Pet(BaseModel):
    pet: Union[Cat, Dog] = Field(discriminator="kind")


class PlainUnion(BaseModel):
    value: Union[int, str]
    either: Union[Cat, Dog]


class Maps(BaseModel):
    counts: dict[str, int]


class MapOfModels(BaseModel):
    addresses: dict[str, Address]


class Tuples(BaseModel):
    point: tuple[int, int]
    row: tuple[int, str, bool]


class VariadicTuple(BaseModel):
    values: tuple[int, ...]


class TreeNode(BaseModel):
    label: str
    children: list[TreeNode] = []


class LinkedNode(BaseModel):
    value: int
    next: Optional[LinkedNode] = None


class Numbers(BaseModel):
    percent: int = Field(ge=0, le=100)
    ratio: float = Field(gt=0, lt=1)
    step: int = Field(multiple_of=5)
    price: float = Field(ge=0, multiple_of=0.01)


class Strings(BaseModel):
    code: str = Field(min_length=3, max_length=8, pattern=r"^[A-Z]+$")
    comment: str = Field(max_length=200)
    slug: Annotated[str, Field(pattern=r"^[a-z0-9-]+$")]


class Defaults(BaseModel):
    title: str = "untitled"
    count: int = 0
    enabled: bool = True
    tags: list[str] = Field(default_factory=list)


class Dates(BaseModel):
    day: dt.date
    at: dt.datetime
    clock: dt.time
    wait: dt.timedelta


class LocalTime(BaseModel):
    """A time of day without an offset: Pydantic accepts it, the schema's `format: time` does not."""

    clock: dt.time


class Ids(BaseModel):
    id: uuid.UUID
    parent: Optional[uuid.UUID] = None


class Money(BaseModel):
    amount: decimal.Decimal
    capped: decimal.Decimal = Field(max_digits=6, decimal_places=2)


class Contacts(BaseModel):
    email: EmailStr
    homepage: HttpUrl
    link: AnyUrl


class Policy(BaseModel):
    """x-vouch through json_schema_extra: repairs on cosmetic fields, a finding on the decision."""
    model_config = ConfigDict(json_schema_extra={"x-vouch": {"unwrap": ["fence", "prose"]}})
    verdict: Literal["eligible", "maybe", "not_eligible"] = Field(
        json_schema_extra={"x-vouch": {"findings": [{"when": {"const": "not_eligible"}, "message": "not eligible"}]}}
    )
    score: int = Field(
        ge=0, le=100,
        json_schema_extra={"x-vouch": {"repair": ["coerce", "round", "clamp", "default_if_invalid"], "default": 0}},
    )
    summary: str = Field(min_length=1, json_schema_extra={"x-vouch": {"repair": ["trim"]}})


class Sets(BaseModel):
    labels: set[str]
    frozen: frozenset[int]


class Strict(BaseModel):
    model_config = ConfigDict(strict=True)
    count: int
    on: bool
    name: str


class Aliases(BaseModel):
    first_name: str = Field(alias="firstName")
    last_name: str = Field(alias="lastName")


class LineItem(BaseModel):
    sku: str = Field(pattern=r"^[A-Z]{3}-\d{4}$")
    quantity: int = Field(ge=1)
    unit_price: float = Field(ge=0)


class Invoice(BaseModel):
    """A realistic extraction: nested, lists, dates, enums, optional."""
    number: str
    issued: dt.date
    currency: Literal["EUR", "USD", "GBP"]
    items: list[LineItem] = Field(min_length=1)
    customer: Person
    notes: Optional[str] = None


class Step(BaseModel):
    explanation: str
    output: str


class MathReasoning(BaseModel):
    """OpenAI's structured-outputs guide example."""
    steps: list[Step]
    final_answer: str


class Forbid(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: int
    b: Optional[str] = None


class Shape(BaseModel):
    kind: Literal["circle", "square"]
    size: float = Field(gt=0)


class Drawing(BaseModel):
    """Lists of discriminated unions and a map of lists."""
    shapes: list[Annotated[Union[Cat, Dog], Field(discriminator="kind")]]
    layers: dict[str, list[Shape]]


# Shapes written for OpenAI's strict mode (nullable rather than optional).
class NullableNested(BaseModel):
    address: Address | None
    tags: list[str] | None


class Classification(BaseModel):
    label: Literal["spam", "ham", "unsure"]
    confidence: float = Field(ge=0, le=1)
    reasons: list[str]


class Sentiment(BaseModel):
    sentiment: Literal["positive", "negative", "neutral"]
    score: float | None


class CalendarEvent(BaseModel):
    """OpenAI's structured-outputs guide example, with dates."""
    name: str
    date: dt.date
    starts: dt.datetime
    ends: dt.datetime | None
    participants: list[EmailStr]


class Moderation(BaseModel):
    flagged: bool = Field(
        json_schema_extra={"x-vouch": {"findings": [{"when": {"const": True}, "message": "the content is flagged"}]}}
    )
    categories: list[Literal["violence", "hate", "self_harm", "sexual"]]
    explanation: str = Field(json_schema_extra={"x-vouch": {"repair": ["trim"]}})


class Entity(BaseModel):
    type: Literal["person", "org", "place"]
    text: str = Field(min_length=1)
    start: int = Field(ge=0)


class Entities(BaseModel):
    entities: list[Entity]


class DeepE(BaseModel):
    e: bool


class DeepC(BaseModel):
    d: list[DeepE]


class DeepB(BaseModel):
    c: DeepC


class DeepA(BaseModel):
    b: DeepB


class Deep(BaseModel):
    a: DeepA


class UnionNullable(BaseModel):
    value: str | float | None
    kind: Literal["a", "b"] | None


ADDR = {"street": "1 Main St", "city": "Springfield", "postcode": "12345"}

MODELS = [
    ("Plate", Plate, [
        {"productPresent": False, "productTextPresent": False, "garbledText": False},
        {"productPresent": True, "productTextPresent": True, "garbledText": False},
    ]),
    ("Optionals", Optionals, [
        {"name": "Ada"},
        {"name": "Ada", "nickname": "ada", "age": 36},
        {"name": "Ada", "nickname": None, "age": None},
    ]),
    ("NullableRequired", NullableRequired, [
        {"value": 1, "note": "x"},
        {"value": None, "note": None},
    ]),
    ("Person", Person, [
        {"name": "Bob", "address": ADDR},
        {"name": "Bob", "address": ADDR, "previous": [ADDR, ADDR]},
    ]),
    ("Lists", Lists, [
        {"tags": [], "scores": [0.5], "matrix": []},
        {"tags": ["a", "b"], "scores": [1, 2.5, 3], "matrix": [[1, 2], [3]]},
    ]),
    ("Enums", Enums, [
        {"color": "red", "priority": 1},
        {"color": "blue", "priority": 3},
    ]),
    ("Literals", Literals, [
        {"status": "ok", "version": 2, "flag": True},
        {"status": "error", "version": 2, "flag": True},
    ]),
    ("Pet", Pet, [
        {"pet": {"kind": "cat", "lives": 9}},
        {"pet": {"kind": "dog", "good": True}},
    ]),
    ("PlainUnion", PlainUnion, [
        {"value": 3, "either": {"kind": "cat", "lives": 1}},
        {"value": "three", "either": {"kind": "dog", "good": False}},
    ]),
    ("Maps", Maps, [
        {"counts": {}},
        {"counts": {"a": 1, "b": 2}},
    ]),
    ("MapOfModels", MapOfModels, [
        {"addresses": {"home": ADDR}},
        {"addresses": {}},
    ]),
    ("Tuples", Tuples, [
        {"point": [1, 2], "row": [1, "a", True]},
        {"point": [0, -5], "row": [7, "", False]},
    ]),
    ("VariadicTuple", VariadicTuple, [
        {"values": []},
        {"values": [1, 2, 3]},
    ]),
    ("TreeNode", TreeNode, [
        {"label": "root"},
        {"label": "root", "children": [{"label": "a", "children": [{"label": "b", "children": []}]}, {"label": "c"}]},
    ]),
    ("LinkedNode", LinkedNode, [
        {"value": 1},
        {"value": 1, "next": {"value": 2, "next": {"value": 3, "next": None}}},
    ]),
    ("Numbers", Numbers, [
        {"percent": 0, "ratio": 0.5, "step": 10, "price": 9.99},
        {"percent": 100, "ratio": 0.001, "step": -5, "price": 0},
    ]),
    ("Strings", Strings, [
        {"code": "ABC", "comment": "", "slug": "a-1"},
        {"code": "ABCDEFGH", "comment": "fine", "slug": "x"},
    ]),
    ("Defaults", Defaults, [
        {},
        {"title": "t", "count": 3, "enabled": False, "tags": ["x"]},
    ]),
    ("Dates", Dates, [
        {"day": "2024-02-29", "at": "2024-02-29T12:30:00Z", "clock": "12:30:00+02:00", "wait": "PT1H"},
        {"day": "1999-12-31", "at": "1999-12-31T23:59:59+02:00", "clock": "00:00:00Z", "wait": "P1DT2H"},
    ]),
    ("LocalTime", LocalTime, [
        {"clock": "12:30:00"},
        {"clock": "12:30:00Z"},
    ]),
    ("Ids", Ids, [
        {"id": "123e4567-e89b-12d3-a456-426614174000"},
        {"id": "123e4567-e89b-12d3-a456-426614174000", "parent": "00000000-0000-4000-8000-000000000000"},
    ]),
    ("Money", Money, [
        {"amount": "12.50", "capped": "1234.56"},
        {"amount": 3, "capped": 0.5},
    ]),
    ("Contacts", Contacts, [
        {"email": "ada@example.com", "homepage": "https://example.com/", "link": "ftp://example.org/x"},
    ]),
    ("Policy", Policy, [
        {"verdict": "eligible", "score": 80, "summary": "ok"},
        {"verdict": "not_eligible", "score": 0, "summary": "no"},
    ]),
    ("Sets", Sets, [
        {"labels": ["a", "b"], "frozen": [1, 2]},
        {"labels": [], "frozen": []},
    ]),
    ("Strict", Strict, [
        {"count": 1, "on": True, "name": "n"},
    ]),
    ("Aliases", Aliases, [
        {"firstName": "Ada", "lastName": "Lovelace"},
    ]),
    ("Invoice", Invoice, [
        {"number": "INV-1", "issued": "2024-01-31", "currency": "EUR",
         "items": [{"sku": "ABC-1234", "quantity": 2, "unit_price": 9.5}],
         "customer": {"name": "Bob", "address": ADDR}},
        {"number": "INV-2", "issued": "2024-02-01", "currency": "USD",
         "items": [{"sku": "XYZ-0001", "quantity": 1, "unit_price": 0}, {"sku": "XYZ-0002", "quantity": 10, "unit_price": 1.25}],
         "customer": {"name": "Eve", "address": ADDR, "previous": []}, "notes": "paid"},
    ]),
    ("MathReasoning", MathReasoning, [
        {"steps": [{"explanation": "8x = -30", "output": "x = -3.75"}], "final_answer": "x = -3.75"},
        {"steps": [], "final_answer": "none"},
    ]),
    ("Forbid", Forbid, [
        {"a": 1},
        {"a": 1, "b": "x"},
    ]),
    ("Drawing", Drawing, [
        {"shapes": [{"kind": "cat", "lives": 3}, {"kind": "dog", "good": True}], "layers": {"bg": [{"kind": "circle", "size": 1.5}]}},
        {"shapes": [], "layers": {}},
    ]),
    ("NullableNested", NullableNested, [
        {"address": ADDR, "tags": ["a"]},
        {"address": None, "tags": None},
    ]),
    ("Classification", Classification, [
        {"label": "spam", "confidence": 0.9, "reasons": ["link"]},
        {"label": "unsure", "confidence": 0, "reasons": []},
    ]),
    ("Sentiment", Sentiment, [
        {"sentiment": "positive", "score": 0.8},
        {"sentiment": "neutral", "score": None},
    ]),
    ("CalendarEvent", CalendarEvent, [
        {"name": "Science fair", "date": "2024-05-03", "starts": "2024-05-03T09:00:00Z", "ends": None,
         "participants": ["alice@example.com", "bob@example.com"]},
    ]),
    ("Moderation", Moderation, [
        {"flagged": False, "categories": [], "explanation": "fine"},
        {"flagged": True, "categories": ["hate", "violence"], "explanation": "slur"},
    ]),
    ("Entities", Entities, [
        {"entities": []},
        {"entities": [{"type": "person", "text": "Ada", "start": 0}, {"type": "place", "text": "London", "start": 10}]},
    ]),
    ("Deep", Deep, [
        {"a": {"b": {"c": {"d": []}}}},
        {"a": {"b": {"c": {"d": [{"e": True}, {"e": False}]}}}},
    ]),
    ("UnionNullable", UnionNullable, [
        {"value": "x", "kind": "a"},
        {"value": 1.5, "kind": None},
        {"value": None, "kind": "b"},
    ]),
]
