"""vouch.spark on pyspark in local mode (local[2]): over 100,000 replies of the
shared bench corpus, the verdict column equals `vouch batch`'s output line for
line, byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator, List

import pytest

from conftest import ROOT, bench_corpus, shared_dir

if os.environ.get("CI") == "true":
    import pyspark  # noqa: F401 (CI installs it: missing is a failure, not a skip)
else:
    pytest.importorskip("pyspark", reason="pyspark is not installed (bindings/python/test installs it)")

from pyspark.sql import SparkSession  # noqa: E402

import vouch  # noqa: E402
from vouch.spark import with_verdicts  # noqa: E402

REPLIES = 100_000


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("vouch-test")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bench_corpus(tmp_path_factory.mktemp("corpus"), REPLIES) / "small.jsonl"


def test_the_verdict_column_equals_vouch_batch_line_for_line(spark: Any, corpus: Path, vouch_bin: Path, tmp_path: Path) -> None:
    contract_path = shared_dir() / "bench/contracts/eligibility_verdict.lenient.json"
    batch_out = tmp_path / "verdicts.jsonl"
    subprocess.run(
        [str(vouch_bin), "batch", "-q", "-c", str(contract_path), str(corpus), "--out", str(batch_out)],
        check=False,
        capture_output=True,
    )
    expected: List[str] = []
    for line in batch_out.read_text().splitlines():
        row = json.loads(line)
        head = f'"line":{row["line"]},"verdict":'
        at = line.index(head) + len(head)
        assert line.endswith("}")
        expected.append(line[at:-1])
    assert len(expected) == REPLIES

    rows = [json.loads(line) for line in corpus.read_text().splitlines()]
    df = spark.createDataFrame([(i + 1, r["raw"]) for i, r in enumerate(rows)], "line long, raw string").repartition(4)
    contract = vouch.Contract(contract_path.read_bytes())
    df = df.cache()
    assert df.count() == REPLIES
    # The figure: the verdict column computed for every row (Spark's noop sink), the
    # input already in memory; collecting rows into Python below is not counted.
    started = time.perf_counter()
    with_verdicts(df, contract).write.format("noop").mode("overwrite").save()
    took = time.perf_counter() - started
    print(f"\nvouch.spark: {REPLIES:,} replies on local[2] in {took:.1f} s: {REPLIES / took:,.0f} replies/s")
    checked = with_verdicts(df, contract).select("line", "verdict").collect()
    got = sorted(checked, key=lambda r: r["line"])
    assert len(got) == REPLIES
    mismatches = [r["line"] for r, want in zip(got, expected) if r["verdict"]["json"] != want]
    assert not mismatches, f"{len(mismatches)} lines differ, first {mismatches[:5]}"
    # The typed fields agree with the JSON.
    for r in got[:2000]:
        v, shown = r["verdict"], json.loads(r["verdict"]["json"])
        assert (v["outcome"], v["passed"]) == (shown["outcome"], shown["pass"])
        assert [p["code"] for p in v["problems"]] == [p["code"] for p in shown["problems"]]
        assert [json.loads(x["after"]) for x in v["repairs"]] == [x["after"] for x in shown["repairs"]]
        assert (v["value"] is None) == (shown["value"] is None)
        if v["value"] is not None:
            assert json.loads(v["value"]) == shown["value"]


def test_a_null_reply_is_refused_as_no_answer_and_bad_columns_are_refused(spark: Any) -> None:
    contract = vouch.Contract({"type": "object"})
    df = spark.createDataFrame([(1, None), (2, "{}"), (3, "[]")], "id int, raw string")
    got = {r["id"]: r["verdict"] for r in with_verdicts(df, contract).collect()}
    assert (got[1]["outcome"], got[1]["problems"][0]["code"], got[1]["problems"][0]["class"]) == (
        "refused",
        "empty_reply",
        "no_answer",
    )
    assert got[2]["passed"] and got[2]["value"] == "{}"
    assert got[3]["problems"][0]["code"] == "wrong_type"
    with pytest.raises(ValueError, match="no column 'reply'"):
        with_verdicts(df, contract, raw="reply")
    with pytest.raises(ValueError, match="already has a column 'id'"):
        with_verdicts(df, contract, out="id")
