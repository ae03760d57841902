"""Pydantic models as contracts: where the model and vouch agree, the same
object comes out; where Pydantic's lax mode would coerce, vouch refuses."""

from __future__ import annotations

import enum
from typing import Any, Dict, List, Literal, Optional, Union

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from typing_extensions import Annotated

import vouch


class Colour(str, enum.Enum):
    red = "red"
    green = "green"


class Address(BaseModel):
    model_config = ConfigDict(extra="forbid")
    street: str = Field(min_length=1)
    zip: Annotated[str, Field(pattern=r"^[0-9]{5}$")]


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = Field(ge=0, le=9)


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class Person(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=40)
    age: int = Field(ge=0, le=150)
    score: float = Field(ge=0, le=1)
    nickname: Optional[str] = None
    colour: Colour
    tier: Literal["free", "pro"]
    address: Address
    tags: List[str] = Field(max_length=3)
    pet: Annotated[Union[Cat, Dog], Field(discriminator="kind")]


AGREE = [
    '{"name": "Ada", "age": 36, "score": 0.5, "colour": "red", "tier": "pro",'
    ' "address": {"street": "1 Main St", "zip": "12345"}, "tags": [], "pet": {"kind": "cat", "lives": 9}}',
    '{"name": "B", "age": 0, "score": 1, "nickname": null, "colour": "green", "tier": "free",'
    ' "address": {"street": "x", "zip": "00000"}, "tags": ["a", "b", "c"], "pet": {"kind": "dog", "good": true}}',
    '{"name": "Grace", "age": 150, "score": 0.0, "nickname": "amazing", "colour": "red", "tier": "free",'
    ' "address": {"street": "é", "zip": "99999"}, "tags": ["\\u00e9"], "pet": {"kind": "cat", "lives": 0}}',
]


@pytest.fixture(scope="module")
def person() -> vouch.Contract:
    return vouch.Contract.from_pydantic(Person)


@pytest.mark.parametrize("raw", AGREE)
def test_where_model_and_contract_agree_the_same_object_comes_out(person: vouch.Contract, raw: str) -> None:
    verdict = person.check(raw)
    assert verdict.passed, verdict.problems
    parsed = person.parse(raw, Person)
    assert parsed == Person.model_validate_json(raw, strict=True)
    assert isinstance(parsed.pet, (Cat, Dog)) and parsed.colour in Colour
    # The value is the reply's data, as json.loads would give it.
    import json

    assert verdict.value == json.loads(raw)


def _base(**change: object) -> str:
    import json

    doc: Dict[str, Any] = json.loads(AGREE[0])
    doc.update(change)
    return json.dumps(doc)


# (reply, path, vouch's code): Pydantic's default (lax) mode accepts each reply,
# coercing it; vouch refuses it, saying where.
COERCED = [
    (_base(age="36"), "/age", "wrong_type"),
    (_base(score="0.5"), "/score", "wrong_type"),
    (_base(tier="pro", colour="red", tags=["a"], name="Ada", score=1, age=True), "/age", "wrong_type"),
    (_base(pet={"kind": "dog", "good": "yes"}), "/pet/good", "wrong_type"),
    (_base(pet={"kind": "dog", "good": 1}), "/pet/good", "wrong_type"),
    (_base(pet={"kind": "cat", "lives": "9"}), "/pet/lives", "wrong_type"),
]


@pytest.mark.parametrize("raw,path,code", COERCED)
def test_what_pydantic_lax_mode_coerces_vouch_refuses(person: vouch.Contract, raw: str, path: str, code: str) -> None:
    Person.model_validate_json(raw)  # lax: accepted (coerced)
    with pytest.raises(ValidationError):
        Person.model_validate_json(raw, strict=True)
    verdict = person.check(raw)
    assert verdict.outcome == "refused"
    assert any(p.path == path and p.code == code for p in verdict.problems), verdict.problems
    with pytest.raises(vouch.Refused) as refused:
        person.parse(raw, Person)
    assert refused.value.verdict.to_json() == verdict.to_json()


def test_pydantic_reads_duplicate_keys_silently_vouch_refuses(person: vouch.Contract) -> None:
    raw = AGREE[0][:-1] + ', "age": 99}'
    assert Person.model_validate_json(raw, strict=True).age == 99  # the last one wins, silently
    verdict = person.check(raw)
    assert [(p.code, p.path) for p in verdict.problems][:1] == [("duplicate_key", "/age")]


def test_a_cut_off_or_empty_or_fenced_reply_is_no_answer(person: vouch.Contract) -> None:
    for raw in [AGREE[0][:-20], "", "```json\n" + AGREE[0] + "\n```", "Sure! " + AGREE[0], "null", "{}"]:
        verdict = person.check(raw)
        assert verdict.outcome == "refused", raw
        assert verdict.problems[0].class_ == "no_answer", (raw, verdict.problems)


def test_x_vouch_travels_through_json_schema_extra() -> None:
    class Eligibility(BaseModel):
        model_config = ConfigDict(extra="forbid", json_schema_extra={"x-vouch": {"unwrap": ["fence"]}})
        verdict: Literal["eligible", "maybe", "not_eligible"]
        score: int = Field(ge=0, le=100, json_schema_extra={"x-vouch": {"repair": ["clamp"]}})
        summary: str = Field(min_length=1)

    contract = vouch.Contract.from_pydantic(Eligibility)
    verdict = contract.check('```json\n{"verdict": "maybe", "score": 142, "summary": "ok"}\n```')
    assert verdict.passed, verdict.problems
    assert verdict.value == {"verdict": "maybe", "score": 100, "summary": "ok"}
    assert [(r.path, r.rule) for r in verdict.repairs] == [("", "unwrap"), ("/score", "clamp")]
    assert (verdict.repairs[1].before, verdict.repairs[1].after) == (142, 100)
    assert contract.parse('{"verdict": "eligible", "score": 7, "summary": "s"}', Eligibility).score == 7
    for raw, code in [
        ('{"verdict": "likely", "score": 1, "summary": "s"}', "not_allowed"),
        ('{"verdict": "maybe", "score": "80", "summary": "s"}', "wrong_type"),
        ('{"verdict": "maybe", "score": 1, "summary": ""}', "too_short"),
    ]:
        assert contract.check(raw).problems[0].code == code, raw
