"""Errors never cross as panics: every failure is a Python exception with a
message, and hostile replies are refusals."""

from __future__ import annotations

import pytest

import vouch

OBJ = vouch.Contract({"type": "object"})


def test_contract_errors_list_every_mistake_with_keyword_and_location() -> None:
    with pytest.raises(vouch.ContractError) as e:
        vouch.Contract({"type": "object", "properties": {"a": {"minimum": "x"}, "b": {"pattern": "("}}})
    assert [(m["kind"], m["keyword"], m["location"]) for m in e.value.mistakes] == [
        ("invalid_value", "minimum", "/properties/a"),
        ("bad_pattern", "pattern", "/properties/b"),
    ]
    assert str(e.value).splitlines()[0] == "/properties/a: minimum: must be a number"
    bad: object
    for bad in ["{", b"\xff", '{"type": "strin"}', {"x": float("nan")}]:
        with pytest.raises(vouch.ContractError) as e:
            vouch.Contract(bad)  # type: ignore[arg-type]
        assert e.value.mistakes and isinstance(e.value, ValueError)


def test_a_reply_of_the_wrong_type_is_a_type_error() -> None:
    for bad in [None, 42, {"a": 1}, ["{}"]]:
        with pytest.raises(TypeError, match="a reply must be str or bytes"):
            OBJ.check(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="each reply must be str or bytes"):
        OBJ.check_many(["{}", 3])  # type: ignore[list-item]


@pytest.mark.parametrize(
    "raw,code",
    [
        ("[" * 100_000, "too_deep"),
        (b'{"a": "\xff"}', "not_json"),
        ('{"a": 1, "a": 2}', "duplicate_key"),
        ('{"a": NaN}', "not_json"),
        ("", "empty_reply"),
        ('{"a": 1', "truncated"),
        (" " * 5_000_000, "too_large"),
    ],
)
def test_hostile_replies_are_refused_not_crashed(raw: object, code: str) -> None:
    verdict = OBJ.check(raw)  # type: ignore[arg-type]
    assert verdict.outcome == "refused"
    assert code in [p.code for p in verdict.problems], verdict.problems
    assert all(p.class_ == "no_answer" for p in verdict.problems if p.code == code)
    assert verdict.value is None


def test_a_verdict_has_no_truth_value() -> None:
    with pytest.raises(TypeError, match="verdict.passed"):
        bool(OBJ.check("{}"))


def test_unknown_provider_and_unexportable_contract() -> None:
    with pytest.raises(ValueError, match="unknown provider"):
        OBJ.schema("nope")
    assert OBJ.schema("json-schema") == {"type": "object"}
    wrapped = vouch.Contract({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}).schema(
        "openai", "verdict"
    )
    assert wrapped["json_schema"]["name"] == "verdict"
