#!/usr/bin/env python3
"""The repairing peer of issue 6, measured the way bench/compare measures vouch:
json_repair (read anything into JSON) then jsonschema-rs (validate against the
strict contract), one core, corpus in memory, best of N passes.

    python3 -m venv target/peer-venv && target/peer-venv/bin/pip install json-repair jsonschema-rs
    target/peer-venv/bin/python bench/peers/json_repair_peer.py target/bench-corpus [--iterations 3]

Prints MB/s per file and how many faulty (and truncated) replies it accepted.
"""
import json
import pathlib
import sys
import time

import json_repair
import jsonschema_rs


def main() -> int:
    corpus = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/bench-corpus")
    iterations = int(sys.argv[sys.argv.index("--iterations") + 1]) if "--iterations" in sys.argv else 3
    shared = pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "bench" / "contracts"
    validators = {}
    for file in ("small.jsonl", "large.jsonl"):
        replies = [json.loads(line) for line in (corpus / file).open(encoding="utf-8")]
        for r in replies:
            name = r["contract"]
            if name not in validators:
                schema = json.loads((shared / f"{name}.schema.json").read_text())
                validators[name] = jsonschema_rs.validator_for(schema)
        size = sum(len(r["raw"].encode()) for r in replies)
        best = float("inf")
        faulty = truncated = 0
        for _ in range(iterations):
            started = time.perf_counter()
            f = t = 0
            for r in replies:
                try:
                    value = json_repair.loads(r["raw"])
                    ok = validators[r["contract"]].is_valid(value)
                except Exception:  # noqa: BLE001 - a peer that throws refuses
                    ok = False
                if ok and r["fault"] is not None:
                    f += 1
                    if r["fault"] == "truncated":
                        t += 1
            best = min(best, time.perf_counter() - started)
            faulty, truncated = f, t
        print(f"{file}: {len(replies)} replies, {size / 1e6:.1f} MB, {size / 1e6 / best:.1f} MB/s, "
              f"faulty accepted {faulty}, truncated accepted {truncated}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
