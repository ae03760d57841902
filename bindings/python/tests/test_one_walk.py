"""`check(raw, value=True)` and `parse(raw)`: the value built in the check's
own walk gives the very verdict `check(raw)` gives, field for field, on the
bench corpus (strict and lenient contracts, every fault class), on mutations
of its replies, and on the bundled examples; and the one walk is taken, not
only the usual way. And `check_many` over the same corpus gives `check`'s
verdicts, in order."""

from __future__ import annotations

import json
import random
from typing import Any, Dict, List, Tuple

import pytest

import vouch
from conftest import ROOT, bench_corpus, shared_dir

REPLIES = 6000


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> List[Dict[str, Any]]:
    out = bench_corpus(tmp_path_factory.mktemp("corpus"), REPLIES, 40)
    lines = (out / "small.jsonl").read_text().splitlines() + (out / "large.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def contracts(kind: str) -> Dict[str, vouch.Contract]:
    folder = shared_dir() / "bench/contracts"
    names = ["plate_check", "eligibility_verdict", "invoice_extraction"]
    return {n: vouch.Contract((folder / f"{n}.{kind}.json").read_bytes()) for n in names}


def fields(v: vouch.Verdict) -> Tuple[Any, ...]:
    return (
        v.to_json(),
        v.outcome,
        v.passed,
        v.accepted,
        [p.to_dict() for p in v.problems],
        [(r.path, r.rule, r.before, r.after, r.message) for r in v.repairs],
        [(f.path, f.message) for f in v.findings],
        v.value,
        v.json,
        v.reask(),
    )


def same_verdict(contract: vouch.Contract, raw: Any) -> bool:
    """Both ways give the same fields, and the fields of the core's whole
    verdict (`check_many` holds it as the core gives it: no one walk, no
    report left unwritten); True when the one walk decided it."""
    usual = contract.check(raw)
    walked = contract.check(raw, value=True)
    (whole,) = contract.check_many([raw])
    one_walk = walked._held_as_sent
    # A refusal held unreported says so before its report is written.
    for v in (usual, walked):
        if v._held_unreported:
            assert (v.outcome, v.accepted, v.passed, v.value, v.repairs, v.findings) == ("refused", False, False, None, [], [])
    # The value first: the one walk's is built already, nothing else asked yet.
    assert walked.value == usual.value
    assert fields(walked) == fields(usual), raw
    assert fields(usual) == fields(whole), raw
    if one_walk:
        assert usual.passed and not usual.repairs and not usual.findings
        text = raw.decode() if isinstance(raw, bytes) else raw
        assert walked.value == json.loads(text)
    return bool(one_walk)


@pytest.mark.parametrize("kind", ["schema", "lenient"])
def test_the_corpus_gives_the_same_verdicts_either_way(corpus: List[Dict[str, Any]], kind: str) -> None:
    cs = contracts(kind)
    walked = refused = 0
    for row in corpus:
        raw = row["raw"]
        contract = cs[row["contract"]]
        walked += same_verdict(contract, raw)
        walked += same_verdict(contract, raw.encode())
        refused += not contract.check(raw).accepted
        if row["fault"] is not None and kind == "schema":
            assert not contract.check(raw, value=True).accepted, row
            # The strict contracts' faults are all certain to the single pass:
            # refused before any report is written.
            assert contract.check(raw)._held_unreported, row
        if row["fault"] is None and kind == "schema":
            # A reply passed as sent is held as sent by `check` too: no
            # verdict built, its value walked from it when first read.
            assert contract.check(raw)._held_as_sent, row
    print(f"\n  held as sent, {kind}: {walked // 2} of {len(corpus)} corpus replies decided without a whole verdict, {refused} refused")
    if kind == "schema":
        # The strict contracts ask for no repair: every valid reply is taken in one walk.
        valid = sum(row["fault"] is None for row in corpus)
        assert walked // 2 == valid
    else:
        # Repairs need the whole verdict: a lenient contract is never walked
        # once, but a reply it passes as sent (nothing to repair) is still
        # held as sent, its value walked from the reply when first read.
        passed_as_sent = sum(contract.check(row["raw"])._held_as_sent for row in corpus for contract in [cs[row["contract"]]])
        assert walked // 2 == passed_as_sent > 0


def test_mutated_replies_give_the_same_verdicts_either_way(corpus: List[Dict[str, Any]]) -> None:
    cs = contracts("schema")
    rng = random.Random(20261203)
    pieces = ['"', "\\", "\\u0000", "\\ud800", "{", "}", "[", "]", ",", ":", "1e400", "-0", "9007199254740993",
              "null", "true", " ", "\u00e9", "\U0001f600", "\x00", "0.1", "\"x\":1"]
    valid = [row for row in corpus if row["fault"] is None][:1500]
    walked = 0
    for row in valid:
        raw: str = row["raw"]
        for _ in range(4):
            at = rng.randrange(len(raw) + 1)
            cut = rng.randrange(0, 3)
            mutated = raw[:at] + rng.choice(pieces) + raw[at + cut:]
            walked += same_verdict(cs[row["contract"]], mutated)
        walked += same_verdict(cs[row["contract"]], raw.encode("utf-8")[:-1] + b"\xff")
    print(f"\n  one walk: {walked} of {len(valid) * 5} mutated replies still decided in one walk")


def test_the_examples_give_the_same_verdicts_either_way() -> None:
    examples = ROOT / "examples"
    expect: Dict[str, Dict[str, Any]] = json.loads((examples / "replies/expect.json").read_text())
    for case, spec in sorted(expect.items()):
        contract = vouch.Contract((examples / spec["contract"]).read_bytes())
        raw = (examples / "replies" / case).read_bytes()
        same_verdict(contract, raw)


def test_parse_without_a_model_is_the_value_or_the_refusal() -> None:
    contract = vouch.Contract(
        {"type": "object", "properties": {"score": {"type": "integer", "maximum": 100}}, "required": ["score"],
         "additionalProperties": False}
    )
    assert contract.parse('{"score": 80}') == {"score": 80}
    assert contract.parse(b' {"score": 80}\n') == {"score": 80}
    for bad in ['{"score": 142}', '{"score": "80"}', "{}", '{"score": 80, "score": 80}', '{"score": 8', ""]:
        with pytest.raises(vouch.Refused) as refused:
            contract.parse(bad)
        assert refused.value.verdict.to_json() == contract.check(bad).to_json()
    # With a model, a refusal raises the same way; the exception is the package's own class.
    with pytest.raises(vouch.Refused):
        contract.parse("{}", dict)
    # A value in one walk is not tied to the reply: the same objects each access.
    v = contract.check('{"score": 80}', value=True)
    assert v._held_as_sent and v.value is v.value


def test_a_value_built_in_one_walk_outlives_its_reply() -> None:
    contract = vouch.Contract({"type": "array", "items": {"type": "string"}})
    verdicts = [contract.check(json.dumps([f"item {i}"] * 3), value=True) for i in range(200)]
    assert all(v._held_as_sent for v in verdicts)
    assert [v.value[0] for v in verdicts] == [f"item {i}" for i in range(200)]
    # The whole verdict, asked for later, is checked again from the kept reply.
    assert verdicts[7].json == contract.check(json.dumps(["item 7"] * 3)).json
    assert json.loads(verdicts[7].to_json())["outcome"] == "accepted"



def test_check_many_gives_check_s_verdicts_in_order(corpus: List[Dict[str, Any]]) -> None:
    cs = contracts("lenient")
    rows = [row for row in corpus if row["contract"] == "eligibility_verdict"][:1500]
    raws: List[Any] = [row["raw"] if i % 3 else row["raw"].encode() for i, row in enumerate(rows)]
    contract = cs["eligibility_verdict"]
    many = contract.check_many(iter(raws))  # any iterable
    assert [v.to_json() for v in many] == [contract.check(r).to_json() for r in raws]
    assert [v.value for v in many] == [contract.check(r).value for r in raws]
    # A reply that is neither str nor bytes, anywhere in the list, is a TypeError naming it.
    with pytest.raises(TypeError, match="each reply must be str or bytes, not int"):
        contract.check_many(raws[:700] + [7] + raws[700:])
    assert contract.check_many([]) == []


def test_check_many_builds_the_values_ahead_when_asked(corpus: List[Dict[str, Any]]) -> None:
    cs = contracts("lenient")
    for name, contract in cs.items():
        rows = [row for row in corpus if row["contract"] == name][:1200]
        raws: List[Any] = [row["raw"] if i % 4 else row["raw"].encode() for i, row in enumerate(rows)]
        ahead = contract.check_many(raws, value=True)
        # Built before anyone reads them, for every accepted verdict and no other.
        assert [v._value_built for v in ahead] == [v.accepted for v in ahead]
        assert any(v.accepted for v in ahead) and any(not v.accepted for v in ahead)
        assert not any(v._value_built for v in contract.check_many(raws))
        usual = [contract.check(r) for r in raws]
        assert [v.value for v in ahead] == [v.value for v in usual]
        assert [v.to_json() for v in ahead] == [v.to_json() for v in usual]
