"""Errors never cross as panics: every failure is a Python exception with a
message, and hostile replies are refusals."""

from __future__ import annotations

from typing import List, Union

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


def unpaired(text: str) -> bytes:
    """A str's bytes with each lone surrogate as UTF-8's pattern writes it (no UTF-8 reader takes them)."""
    return text.encode("utf-8", "surrogatepass")


def test_a_str_with_a_lone_surrogate_is_refused_as_not_json_not_raised() -> None:
    # A lone surrogate has no UTF-8, and json.loads (so every SDK) decodes a
    # "\ud800" escape in a response body into one: a reply the model sent,
    # refused as unreadable where it stands (as a "\ud800" escape is), never
    # raised (one such reply must not cost a batch or a round its verdicts),
    # never read as U+FFFD (a repair no one declared).
    lone = '{"a": "x\ud800"}'
    offset = len('{"a": "x')
    for v in (OBJ.check(lone), OBJ.check(lone, value=True)):
        assert v.outcome == "refused" and v.value is None
        assert [(p.code, p.class_, p.path) for p in v.problems] == [("not_json", "no_answer", "")]
        assert v.to_json() == OBJ.check(unpaired(lone)).to_json()
        assert v.problems[0].position is not None and v.problems[0].position[2] == offset
    many = OBJ.check_many(['{"a": 1}'] * 100 + [lone] + ['{"a": 2}'] * 100)
    assert [v.outcome for v in many] == ["accepted"] * 100 + ["refused"] + ["accepted"] * 100
    assert many[100].to_json() == OBJ.check(lone).to_json()
    with pytest.raises(vouch.Refused) as refused:
        OBJ.parse(lone)
    assert refused.value.verdict.problems[0].code == "not_json"
    stream = OBJ.stream()
    assert stream.feed('{"a": "x') == "pending"
    assert stream.feed("\ud800\"}") == "refused"
    assert stream.finish().to_json() == OBJ.check(lone).to_json()
    # Past a million code points and within the limit, where CPython's UTF-8 is read
    # (and raises on a lone surrogate): the same refusal.
    roomy = vouch.Contract({"type": "object", "x-vouch": {"limits": {"max_bytes": 8 << 20}}})
    long = '{"a": "' + "é" * (1 << 20) + '\udfff"}'
    want = roomy.check(unpaired(long)).to_json()
    assert '"code":"not_json"' in want
    assert roomy.check(long).to_json() == want
    assert roomy.check_many([long])[0].to_json() == want
    # Rounds ask again after it, as after any unreadable reply.
    replies = iter([lone, '{"a": 3}'])
    outcome = vouch.rounds(OBJ, lambda messages: next(replies), max_rounds=2)
    assert outcome.outcome == "accepted" and outcome.value == {"a": 3}
    assert outcome.rounds[0].problems[0].code == "not_json"


def test_replies_of_every_width_and_str_subclasses_read_as_their_text() -> None:
    class Reply(str):
        pass

    contract = vouch.Contract({"type": "object", "required": ["s"], "properties": {"s": {"type": "string", "maxLength": 3}}})
    # One-byte, two-byte and four-byte characters (each a different str layout
    # in CPython), a subclass, and bytes: each read as the same text.
    raws: List[Union[str, bytes]] = ['{"s": "abc"}', '{"s": "é€x"}', '{"s": "😀😀😀"}', '{"s": "😀😀😀😀"}', Reply('{"s": "ab"}'), '{"s": "é€x"}'.encode()]
    want = ["accepted", "accepted", "accepted", "refused", "accepted", "accepted"]
    assert [contract.check(r).outcome for r in raws] == want
    assert [v.outcome for v in contract.check_many(raws * 50)] == want * 50
    assert [contract.check(r, value=True).value for r in raws[:3]] == [{"s": "abc"}, {"s": "é€x"}, {"s": "😀😀😀"}]



def test_a_str_that_is_not_ascii_reads_as_its_utf8_bytes() -> None:
    # A str that is not all ASCII is encoded by vouch from its code points,
    # sixteen at a time where they are ASCII (not by CPython): each is read as
    # the same text as its own UTF-8 bytes. One character of each width at
    # every place of a 40-character reply (inside a sixteen, at its edges,
    # in the tail), keys and values, and text of every length around sixteen.
    contract = vouch.Contract({"type": "object", "properties": {"s": {"type": "string", "maxLength": 30}}})
    raws: List[str] = []
    for wide in ["é", "€", "≥", "😀", "\u0080", "\u07ff", "\u0800", "\uffff", "\U0010ffff", "\x7f"]:
        for at in range(30):
            text = "".join(wide if i == at else chr(0x61 + i % 26) for i in range(30))
            raws.append('{"s": "%s"}' % text)
            raws.append('{"%s": 1}' % text)
        for n in range(1, 40):
            raws.append('{"s": "%s"}' % (wide * n))
    for raw in raws:
        by_str, by_bytes = contract.check(raw), contract.check(raw.encode())
        assert by_str.to_json() == by_bytes.to_json(), raw
        assert contract.check(raw, value=True).value == by_bytes.value, raw
    # Past a million code points CPython encodes (vouch copies out at most 4 MB):
    # read alike, and one too large for the contract is refused alike.
    raws += ['{"s": "%s"}' % ("é" * (1 << 20)), '{"s": "%s"}' % ("é" * (3 << 20)), "é" * ((1 << 20) - 1)]
    assert [v.to_json() for v in contract.check_many(raws)] == [contract.check(r.encode()).to_json() for r in raws]
    assert [contract.check(r).to_json() for r in raws[-3:]] == [contract.check(r.encode()).to_json() for r in raws[-3:]]
    assert "too_large" in [p.code for p in contract.check(raws[-2]).problems]
    # A lone surrogate anywhere, in a run of ASCII or beside another wide character.
    for lone in ["\ud800", "\udfff"]:
        for at in [0, 7, 15, 16, 17, 31, 40]:
            raw = '{"s": "%s"}' % "".join(lone if i == at else ("é" if i == 3 else "a") for i in range(41))
            want = contract.check(unpaired(raw)).to_json()
            assert '"code":"not_json"' in want
            assert contract.check(raw).to_json() == want
            assert contract.check(raw, value=True).to_json() == want
            assert [v.to_json() for v in contract.check_many([raw, raw.replace(lone, "b")])][0] == want

def test_a_str_far_over_max_bytes_is_read_only_as_far_as_the_check_reads() -> None:
    # Past a million code points and over the contract's max_bytes, a str is
    # neither copied whole by vouch nor encoded by CPython: its start is made
    # UTF-8 (what the check reads) and the rest only counted, a piece at a
    # time. The verdict is the one its UTF-8 bytes get: the problems certain
    # within the limit, then too_large with the exact size.
    contract = vouch.Contract(
        {
            "type": "object",
            "properties": {"a": {"type": "boolean"}, "s": {"type": "string"}},
            "x-vouch": {"limits": {"max_bytes": 1000}},
        }
    )
    n = (1 << 20) + 5000
    raws = [
        '{"s": "%s"}' % ("x" * 990 + "é" * n),
        '{"a": "no", "s": "%s"}' % ("é≥" * n),
        '{"s": "%s"}' % ("a" * 995 + "\U0001d11e" * n),  # four-byte characters across the limit
        '{"s": "%s"}' % ("é" * 100 + "x" * n),
    ]
    import tracemalloc

    for raw in raws:
        want = contract.check(raw.encode()).to_json()
        assert '"code":"too_large"' in want
        tracemalloc.start()
        try:
            got = contract.check(raw).to_json()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert got == want, raw[:30]
        # CPython's own UTF-8 of it (what it made before) is 1 MB and more;
        # a piece read at a time is at most 256 KB (64 Ki code points of 4 bytes).
        assert peak < 768 * 1024, peak
        assert contract.check(raw, value=True).to_json() == want
        assert [v.to_json() for v in contract.check_many([raw, '{"a": true}'])] == [want, contract.check('{"a": true}').to_json()]
        with pytest.raises(vouch.Refused):
            contract.parse(raw)
    assert [p.code for p in contract.check(raws[1]).problems] == ["wrong_type", "too_large"]
    # A stream fed such a piece after a small one counts the rest the same way.
    for raw in raws:
        stream = contract.stream()
        head, rest = raw[:5], raw[5:]
        stream.feed(head)
        tracemalloc.start()
        try:
            assert stream.feed(rest) == "refused"
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 768 * 1024, peak
        assert stream.received == len(raw.encode())
        assert stream.finish().to_json() == contract.check(raw.encode()).to_json()
    # A round's reply the same way (it is never sent back: the re-ask alone follows).
    for raw in raws:
        tracemalloc.start()
        try:
            outcome = vouch.rounds(contract, lambda messages: raw, max_rounds=1)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 768 * 1024, peak
        assert outcome.rounds[0].to_json() == contract.check(raw.encode()).to_json()
    # A lone surrogate far past the limit (three bytes, as CPython's
    # surrogatepass writes it) and one within it: each the verdict its bytes get.
    for raw in (raws[0] + "\udc00", "\udc00" + raws[0]):
        want = contract.check(unpaired(raw)).to_json()
        assert contract.check(raw).to_json() == want
        assert contract.check_many([raw])[0].to_json() == want


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
    exportable = vouch.Contract({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})
    wrapped = exportable.schema("openai", "verdict")
    assert wrapped["json_schema"]["name"] == "verdict"
    # A name the provider would answer with a 400 is refused here.
    for provider in ("openai", "anthropic"):
        with pytest.raises(vouch.ExportError, match="is not one .* takes"):
            exportable.schema(provider, "plate check")


def test_check_many_given_one_reply_is_a_type_error_not_a_check_of_each_character() -> None:
    single: object
    for single in ["{}", b"{}", bytearray(b"{}")]:
        with pytest.raises(TypeError) as e:
            OBJ.check_many(single)  # type: ignore[arg-type]
        assert str(e.value) == "check_many takes an iterable of replies, not one reply"
    assert [v.accepted for v in OBJ.check_many(["{}", b"{}", bytearray(b"[]")])] == [True, True, False]  # type: ignore[list-item]


def test_a_boolean_schema_is_a_contract() -> None:
    assert vouch.Contract(True).check('{"any": 1}').passed
    assert vouch.Contract(False).check("{}").outcome == "refused"
    bad: object
    for bad in [5, None, [1], 1.5]:
        with pytest.raises(TypeError) as e:
            vouch.Contract(bad)  # type: ignore[arg-type]
        assert str(e.value) == (
            f"the contract must be a dict, a bool (a boolean schema) or JSON text (str or bytes), not {type(bad).__name__}"
        )


@pytest.mark.parametrize(
    ("schema", "location", "what"),
    [
        ({True: {}}, "", "the key True is not a str (bool): json.dumps would make it a string"),
        ({"properties": {"a": {None: 1}}}, "/properties/a", "the key None is not a str (NoneType): json.dumps would make it a string"),
        ({"properties": {1: {}}}, "/properties", "the key 1 is not a str (int): json.dumps would make it a string"),
        ({"anyOf": [{1.5: 2}]}, "/anyOf/0", "the key 1.5 is not a str (float): json.dumps would make it a string"),
        ({"anyOf": ({}, {(1, 2): 2})}, "/anyOf/1", "the key (1, 2) is not a str (tuple): json.dumps would make it a string"),
        ({"properties": {"a/b~": {"minimum": float("nan")}}}, "/properties/a~1b~0/minimum", "NaN is not a JSON number"),
        ({"enum": [1, float("-inf")]}, "/enum/1", "-inf is not a JSON number"),
        # A lone surrogate is no character (the str form of the contract is refused alike).
        ({"properties": {"\ud800": {}}}, "/properties", "the key '\\ud800' holds a lone surrogate, which is not a character"),
        ({"enum": ["a", "b\udc00"]}, "/enum/1", "the str holds a lone surrogate, which is not a character"),
    ],
)
def test_a_dict_contract_json_dumps_would_change_is_a_contract_error_naming_where(
    schema: object, location: str, what: str
) -> None:
    with pytest.raises(vouch.ContractError) as e:
        vouch.Contract(schema)  # type: ignore[arg-type]
    assert [(m["kind"], m["location"]) for m in e.value.mistakes] == [("not_json", location)]
    assert str(e.value) == f"the contract is not JSON: {location or '(root)'}: {what}"
