"""No native crash on any hostile reply `vouch audit --out` writes, for both
bundled contracts: each reply checked as bytes, as text (Latin-1 and UTF-8 with
surrogate escapes), streamed a byte at a time and checked in one check_many, in
a child process (a crash there is a signal here); each verdict the audit's."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT

CHILD = Path(__file__).with_name("hostile_child.py")


@pytest.mark.parametrize("name", ["plate", "eligibility"])
def test_every_hostile_reply_of_the_audit_no_crash_the_audits_verdict(name: str, vouch_bin: Path) -> None:
    contract = ROOT / "examples/contracts" / f"{name}.json"
    with tempfile.TemporaryDirectory(prefix=f"vouch-hostile-{name}-") as folder:
        audit = subprocess.run([str(vouch_bin), "audit", "-c", str(contract), "--out", folder], capture_output=True)
        assert audit.returncode in (0, 1), audit.stderr
        index = json.loads((Path(folder) / "index.json").read_text())
        assert len(index) >= 50, f"{len(index)} hostile replies"
        child = subprocess.run([sys.executable, str(CHILD), str(contract), folder], capture_output=True, text=True)
        assert child.returncode == 0, f"the child ended with {child.returncode} (a negative one is a signal): {child.stderr}"
        seen = json.loads(child.stdout)
        assert len(seen) == len(index)
        for entry, got in zip(index, seen):
            assert (got["outcome"] == "refused") == (entry["verdict"] == "refused"), entry["file"]
            assert got["passed"] == entry["pass"], entry["file"]
            assert got["codes"] == entry["codes"], entry["file"]
        print(f"{name}: {len(index)} hostile replies checked, streamed and batched without a crash")
