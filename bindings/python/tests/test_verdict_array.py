"""`vouch.spark.verdict_array` (the verdict column built column by column) is
row for row what `verdict_row` gives, read by Arrow one dict at a time (the
way the column was built before, and the oracle here): every bundled example
(refusals, repairs, findings, fallbacks' contracts) and the shared corpus
under a lenient contract, given as str, as bytes and as a null."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Union

import pytest

import vouch
from conftest import ROOT, bench_corpus, shared_dir

if os.environ.get("CI") == "true":
    import pyarrow as pa  # CI installs it (pyspark's): missing is a failure, not a skip
else:
    pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (bindings/python/test installs it)")

from vouch.spark import _replies, verdict_array, verdict_row  # noqa: E402

EXAMPLES = ROOT / "examples"
EXPECT: Dict[str, Dict[str, Any]] = json.loads((EXAMPLES / "replies/expect.json").read_text())
STRING = pa.string()
VERDICT = pa.struct(
    [
        ("outcome", STRING),
        ("passed", pa.bool_()),
        ("value", STRING),
        ("problems", pa.list_(pa.struct([(k, STRING) for k in ("code", "class", "path", "expected", "got", "message")]))),
        ("repairs", pa.list_(pa.struct([(k, STRING) for k in ("path", "rule", "before", "after", "message")]))),
        ("findings", pa.list_(pa.struct([(k, STRING) for k in ("path", "message")]))),
        ("json", STRING),
    ]
)


def _both_ways(verdicts: List[vouch.Verdict]) -> None:
    want = pa.array([verdict_row(v) for v in verdicts], type=VERDICT)
    got = verdict_array(verdicts, VERDICT)
    assert got.type == VERDICT
    assert got.to_pylist() == want.to_pylist()
    assert got.equals(want)


def test_every_example_reply_is_the_same_row_either_way() -> None:
    replies: List[Union[str, bytes]] = [(EXAMPLES / "replies" / case).read_bytes() for case in sorted(EXPECT)]
    seen = {"findings": 0, "repairs": 0, "problems": 0}
    for name in sorted({spec["contract"] for spec in EXPECT.values()}):
        contract = vouch.Contract((EXAMPLES / name).read_bytes())
        verdicts = contract.check_many(replies + [b"", "", "{}"])
        for what in seen:
            seen[what] += sum(bool(getattr(v, what)) for v in verdicts)
        _both_ways(verdicts)
    # The examples hold every kind of field: refusals, repairs, findings.
    assert all(n > 0 for n in seen.values()), seen
    # And an empty batch is an empty column of the same type.
    _both_ways([])


def test_the_corpus_under_a_lenient_contract_is_the_same_row_either_way(tmp_path: Path) -> None:
    corpus = bench_corpus(tmp_path, 3_000) / "small.jsonl"
    rows = [json.loads(line) for line in corpus.read_text().splitlines()]
    for name in ("eligibility_verdict", "plate_check"):
        contract = vouch.Contract((shared_dir() / f"bench/contracts/{name}.lenient.json").read_bytes())
        verdicts = contract.check_many([r["raw"] for r in rows if r["contract"] == name])
        assert any(v.repairs for v in verdicts) and any(v.problems for v in verdicts)
        _both_ways(verdicts)


def test_a_string_column_is_read_as_its_utf8_and_a_null_as_an_empty_reply() -> None:
    texts = ['{"a": "é ☃ 𝄞"}', None, "", "[]"]
    for column in (pa.array(texts, pa.string()), pa.array(texts, pa.large_string())):
        replies = _replies(column)
        assert replies == [t.encode() if t is not None else b"" for t in texts]
    contract = vouch.Contract({"type": "object"})
    by_bytes = contract.check_many(_replies(pa.array(texts, pa.string())))
    by_str = contract.check_many(["" if t is None else t for t in texts])
    assert [v.to_json() for v in by_bytes] == [v.to_json() for v in by_str]
    assert by_bytes[1].problems[0].code == "empty_reply"
    # A binary column is passed as it is.
    raw = pa.array([b"\xff{}", None], pa.binary())
    assert _replies(raw) == [b"\xff{}", b""]
