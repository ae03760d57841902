"""vouch.spark on local[2]: replies/s of the verdict column over the corpus
(the input cached in memory first; Spark's noop sink; best of 3)."""

from __future__ import annotations

import json
import os
import sys
import time

from pyspark.sql import SparkSession

import vouch
from vouch.spark import with_verdicts

corpus, contracts = sys.argv[1], sys.argv[2]
os.environ["PYSPARK_PYTHON"] = sys.executable
spark = (
    SparkSession.builder.master("local[2]")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.driver.memory", "2g")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
rows = [json.loads(line) for line in open(corpus)]
contract = vouch.Contract(open(os.path.join(contracts, "eligibility_verdict.lenient.json")).read())
df = spark.createDataFrame([(i, r["raw"]) for i, r in enumerate(rows)], "id long, raw string").repartition(4).cache()
assert df.count() == len(rows)
best = None
for _ in range(3):
    start = time.perf_counter()
    with_verdicts(df, contract).write.format("noop").mode("overwrite").save()
    took = time.perf_counter() - start
    best = took if best is None else min(best, took)
spark.stop()
print(len(rows) / best)
