"""`vouch.rounds` with the official OpenAI Python SDK as `call`, against a
scripted fake on loopback: the re-ask is the core's words, then refuse and
keep the last good value, marked."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List

import pytest
from openai import AsyncOpenAI, OpenAI

import vouch
from conftest import ROOT

PLATE = vouch.Contract((ROOT / "examples/contracts/plate.json").read_bytes())
GOOD = '{"productPresent": false, "productTextPresent": false, "garbledText": false}'
ASK = [{"role": "user", "content": "Is anything left on the plate?"}]


def _call(client: OpenAI) -> Any:
    def call(messages: List[Any]) -> Any:
        return client.chat.completions.create(model="fake", messages=messages).choices[0].message.content

    return call


def test_an_accepted_first_reply_is_one_round(fake_model: Any) -> None:
    fake = fake_model([GOOD])
    client = OpenAI(base_url=fake.url, api_key="sk-test", max_retries=0)
    outcome = vouch.rounds(PLATE, _call(client), messages=ASK)
    assert (outcome.outcome, outcome.source, outcome.passed, len(outcome.rounds)) == ("accepted", "model", True, 1)
    assert outcome.value == {"productPresent": False, "productTextPresent": False, "garbledText": False}
    sent = fake.seen[0]
    assert sent[0] == {"role": "system", "content": PLATE.prompt()}
    assert sent[1:] == ASK


def test_refused_replies_are_asked_again_in_the_core_s_words(fake_model: Any) -> None:
    fake = fake_model(['{"productPresent": "no"}', "", GOOD])
    client = OpenAI(base_url=fake.url, api_key="sk-test", max_retries=0)
    own = [{"role": "system", "content": "You read plates."}, *ASK]
    outcome = vouch.rounds(PLATE, _call(client), max_rounds=3, messages=own)
    assert (outcome.outcome, outcome.source, len(outcome.rounds)) == ("accepted", "model", 3)
    first, second, third = fake.seen
    assert first[0]["content"] == "You read plates.\n\n" + PLATE.prompt()
    reask = PLATE.check('{"productPresent": "no"}').reask()
    assert second[2:] == [
        {"role": "assistant", "content": '{"productPresent": "no"}'},
        {"role": "user", "content": reask},
    ]
    assert reask is not None and reask.startswith("Your reply was refused. Problems:\n")
    # An empty reply adds no assistant message, only the re-ask.
    assert third[4:] == [{"role": "user", "content": PLATE.check("").reask()}]
    assert [v.outcome for v in outcome.rounds] == ["refused", "refused", "accepted"]


def test_a_reply_refused_for_its_size_is_not_sent_back(fake_model: Any) -> None:
    small = vouch.Contract({"type": "object", "x-vouch": {"limits": {"max_bytes": 64}}})
    big = '{"note": "' + "x" * 100 + '"}'
    fake = fake_model([big, "[1]", "{}"])
    client = OpenAI(base_url=fake.url, api_key="sk-test", max_retries=0)
    outcome = vouch.rounds(small, _call(client), max_rounds=3, messages=ASK)
    assert (outcome.outcome, len(outcome.rounds)) == ("accepted", 3)
    _, second, third = fake.seen
    # Only the re-ask, which says how large it was: the reply would cost the next round as much again.
    assert second[2:] == [{"role": "user", "content": small.check(big).reask()}]
    assert "expected at most 64 bytes" in second[2]["content"]
    # A refusal within the limit is sent back as ever.
    assert third[3:] == [{"role": "assistant", "content": "[1]"}, {"role": "user", "content": small.check("[1]").reask()}]


def test_every_round_refused_keeps_the_last_good_value_marked(fake_model: Any) -> None:
    fake = fake_model(["{}", "[]"])
    client = OpenAI(base_url=fake.url, api_key="sk-test", max_retries=0)
    last_good = {"productPresent": True, "productTextPresent": False, "garbledText": False}
    outcome = vouch.rounds(PLATE, _call(client), max_rounds=2, fallback=last_good, messages=ASK)
    assert (outcome.outcome, outcome.source, outcome.is_fallback, outcome.passed) == ("refused", "fallback", True, False)
    assert outcome.value == last_good
    assert [v.problems[0].class_ for v in outcome.rounds] == ["no_answer", "no_answer"]
    assert len(fake.seen) == 2


def test_a_fallback_that_fails_the_contract_is_not_handed_over(fake_model: Any) -> None:
    fake = fake_model(["true", "true"])
    client = OpenAI(base_url=fake.url, api_key="sk-test", max_retries=0)
    outcome = vouch.rounds(PLATE, _call(client), fallback={"productPresent": "maybe"}, messages=ASK)
    assert (outcome.outcome, outcome.source, outcome.value) == ("refused", None, None)
    assert outcome.fallback is not None and not outcome.fallback.accepted
    no_fallback = vouch.rounds(PLATE, lambda m: "nope", max_rounds=1)
    assert (no_fallback.source, no_fallback.value, len(no_fallback.rounds)) == (None, None, 1)


def test_the_async_twin_with_the_async_sdk(fake_model: Any) -> None:
    fake = fake_model(['{"productPresent": 1}', GOOD])
    client = AsyncOpenAI(base_url=fake.url, api_key="sk-test", max_retries=0)

    async def call(messages: List[Any]) -> Any:
        reply = await client.chat.completions.create(model="fake", messages=messages)
        return reply.choices[0].message.content

    outcome = asyncio.run(vouch.rounds_async(PLATE, call, messages=ASK))
    assert (outcome.outcome, outcome.source, len(outcome.rounds)) == ("accepted", "model", 2)
    assert fake.seen[1][-1] == {"role": "user", "content": PLATE.check('{"productPresent": 1}').reask()}


def test_bad_arguments_are_refused_up_front() -> None:
    with pytest.raises(ValueError, match="max_rounds must be at least 1"):
        vouch.rounds(PLATE, lambda m: GOOD, max_rounds=0)
    with pytest.raises(TypeError, match="must return the reply's text"):
        vouch.rounds(PLATE, lambda m: 42)  # type: ignore[arg-type, return-value]
    with pytest.raises(ValueError):
        vouch.rounds(PLATE, lambda m: GOOD, fallback={"x": float("nan")})


def test_max_rounds_out_of_bounds_is_a_value_error_in_the_core_s_words() -> None:
    # A negative count was an OverflowError ("can't convert negative int to unsigned").
    for given, said in [(-1, "at least 1 (got -1)"), (0, "at least 1 (got 0)"), (101, "at most 100 (got 101)"), (2**70, f"at most 100 (got {2**70})")]:
        with pytest.raises(ValueError) as e:
            vouch.rounds(PLATE, lambda m: GOOD, max_rounds=given)
        assert str(e.value) == f"max_rounds must be {said}"
        with pytest.raises(ValueError, match="max_rounds must be"):
            asyncio.run(vouch.rounds_async(PLATE, _async_good, max_rounds=given))
    assert len(vouch.rounds(PLATE, lambda m: "nope", max_rounds=100).rounds) == 100


async def _async_good(messages: List[Any]) -> str:
    return GOOD


def test_a_reply_as_bytearray_is_taken_as_check_takes_it() -> None:
    assert PLATE.check(bytearray(GOOD.encode())).passed  # type: ignore[arg-type]
    outcome = vouch.rounds(PLATE, lambda m: bytearray(GOOD.encode()))
    assert (outcome.outcome, outcome.source, outcome.value) == ("accepted", "model", PLATE.parse(GOOD))
    # What check refuses, rounds refuses alike.
    with pytest.raises(TypeError, match="a reply must be str or bytes, not memoryview"):
        PLATE.check(memoryview(GOOD.encode()))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"must return the reply's text \(str, bytes, bytearray or None\), not memoryview"):
        vouch.rounds(PLATE, lambda m: memoryview(GOOD.encode()))  # type: ignore[arg-type, return-value]
