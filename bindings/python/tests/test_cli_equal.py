"""Every bundled example reply through the binding gives `to_json()` equal,
byte for byte, to `vouch check --json` (the CLI is the oracle)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Dict

import pytest

import vouch
from conftest import ROOT, is_utf8

EXAMPLES = ROOT / "examples"
EXPECT: Dict[str, Dict[str, Any]] = json.loads((EXAMPLES / "replies/expect.json").read_text())


def test_the_example_cases_are_all_there() -> None:
    assert len(EXPECT) >= 32, "examples/replies/expect.json lost cases"


@pytest.mark.parametrize("case", sorted(EXPECT))
def test_to_json_equals_the_cli_byte_for_byte(case: str, vouch_bin: Path) -> None:
    spec = EXPECT[case]
    contract_path = EXAMPLES / spec["contract"]
    reply_path = EXAMPLES / "replies" / case
    cli = subprocess.run(
        [str(vouch_bin), "check", "--json", "-c", str(contract_path), str(reply_path)], capture_output=True
    )
    assert cli.returncode == spec["exit"], cli.stderr
    line = cli.stdout.decode()
    assert line.endswith("\n") and line.count("\n") == 1
    contract = vouch.Contract(contract_path.read_bytes())
    raw = reply_path.read_bytes()
    verdict = contract.check(raw)
    assert verdict.to_json() == line[:-1]
    # The same verdict whichever way the reply is given, and through check_many.
    if is_utf8(raw):
        assert contract.check(raw.decode()).to_json() == line[:-1]
    assert [v.to_json() for v in contract.check_many([raw, raw])] == [line[:-1]] * 2
    # The Python view agrees with the JSON one.
    shown = json.loads(line)
    assert verdict.outcome == shown["outcome"] == spec["outcome"]
    assert verdict.passed == shown["pass"] == spec["pass"]
    assert [p.to_dict() for p in verdict.problems] == shown["problems"]
    assert [{"path": f.path, "message": f.message} for f in verdict.findings] == shown["findings"]
    assert [
        {"path": r.path, "rule": r.rule, "before": r.before, "after": r.after, "message": r.message}
        for r in verdict.repairs
    ] == shown["repairs"]
    assert verdict.value == shown["value"]
    if verdict.accepted:
        assert json.loads(verdict.json or "") == shown["value"]
    else:
        assert verdict.json is None and verdict.value is None
