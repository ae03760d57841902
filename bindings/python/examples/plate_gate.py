"""The founding plate gate in Python: a Pydantic model as the contract, each
bundled reply vouched for, then rounds with a scripted model.

    python bindings/python/examples/plate_gate.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

from pydantic import BaseModel, ConfigDict, Field

import vouch

HERE = Path(__file__).resolve().parent
REPLIES = HERE.parents[2] / "examples" / "replies" / "plate"


class Plate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    productPresent: bool = Field(
        json_schema_extra={"x-vouch": {"findings": [{"when": {"const": True}, "message": "a product is still in frame"}]}}
    )
    productTextPresent: bool
    garbledText: bool


def main() -> None:
    contract = vouch.Contract.from_pydantic(Plate)
    for path in sorted(REPLIES.iterdir()):
        verdict = contract.check(path.read_bytes())
        if verdict.passed:
            plate = contract.parse(path.read_bytes(), Plate)
            print(f"{path.name:28} pass     {plate!r}")
        elif verdict.accepted:
            print(f"{path.name:28} finding  {verdict.findings[0].message}")
        else:
            first = verdict.problems[0]
            print(f"{path.name:28} refused  [{first.code}/{first.class_}] {first.message}")

    script = ['{"productPresent": "no"}', '{"productPresent": false, "productTextPresent": false, "garbledText": false}']

    def call(messages: List[Dict[str, Any]]) -> str:
        return script.pop(0)

    outcome = vouch.rounds(contract, call, max_rounds=2, messages=[{"role": "user", "content": "Is the plate clean?"}])
    print(f"rounds: {outcome.outcome} from the {outcome.source} after {len(outcome.rounds)} rounds: {outcome.value}")


if __name__ == "__main__":
    main()
