"""vouch.dask over the shared corpus: the verdict column equals `vouch batch`
line for line; a missing reply is refused as no answer."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import bench_corpus, shared_dir

if os.environ.get("CI") == "true":
    import dask  # noqa: F401 (CI installs it: missing is a failure, not a skip)
else:
    pytest.importorskip("dask", reason="dask is not installed (bindings/python/test installs it)")

import dask.dataframe as dd  # noqa: E402
import pandas as pd  # noqa: E402

import vouch  # noqa: E402
from vouch.dask import with_verdicts  # noqa: E402

REPLIES = 20_000


def test_the_verdict_column_equals_vouch_batch_line_for_line(vouch_bin: Path, tmp_path: Path) -> None:
    bench = shared_dir() / "bench"
    corpus = bench_corpus(tmp_path, REPLIES) / "small.jsonl"
    contract_path = bench / "contracts/eligibility_verdict.lenient.json"
    out = tmp_path / "verdicts.jsonl"
    subprocess.run([str(vouch_bin), "batch", "-q", "-c", str(contract_path), str(corpus), "--out", str(out)], check=False, capture_output=True)
    expected = []
    for line in out.read_text().splitlines():
        head = f'"line":{json.loads(line)["line"]},"verdict":'
        expected.append(line[line.index(head) + len(head) : -1])
    rows = [json.loads(line) for line in corpus.read_text().splitlines()]
    pdf = pd.DataFrame({"line": range(1, len(rows) + 1), "raw": [r["raw"] for r in rows]})
    ddf = dd.from_pandas(pdf, npartitions=4)
    got = with_verdicts(ddf, vouch.Contract(contract_path.read_bytes())).compute(scheduler="threads")
    assert list(got["line"]) == list(range(1, REPLIES + 1))
    assert [v["json"] for v in got["verdict"]] == expected
    assert [v["passed"] for v in got["verdict"][:100]] == [json.loads(e)["pass"] for e in expected[:100]]


def test_a_missing_reply_is_refused_and_bad_columns_are_refused() -> None:
    pdf = pd.DataFrame({"id": [1, 2, 3], "raw": [None, "{}", float("nan")]})
    ddf = dd.from_pandas(pdf, npartitions=2)
    contract = vouch.Contract({"type": "object"})
    got = with_verdicts(ddf, contract).compute()
    assert [v["outcome"] for v in got["verdict"]] == ["refused", "accepted", "refused"]
    assert got["verdict"].iloc[0]["problems"][0]["code"] == "empty_reply"
    with pytest.raises(ValueError, match="no column 'reply'"):
        with_verdicts(ddf, contract, raw="reply")
    with pytest.raises(ValueError, match="already has a column 'id'"):
        with_verdicts(ddf, contract, out="id")
