"""test_hostile.py's child: CONTRACT DIR -> the verdict of each reply in DIR's
index, as JSON on stdout (and every reading of it asserted equal). A crash here
is a signal in the parent, not a lost test run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Union

import vouch
from conftest import is_utf8


def main() -> None:
    contract_path, folder = Path(sys.argv[1]), Path(sys.argv[2])
    contract = vouch.Contract(contract_path.read_bytes())
    index = json.loads((folder / "index.json").read_text())
    raws = [(folder / e["file"]).read_bytes() for e in index]
    out: List[Dict[str, Any]] = []
    texts: List[Union[str, bytes]] = []
    wants: List[str] = []
    for raw in raws:
        v = contract.check(raw)
        text = v.to_json()
        # Streamed a byte at a time (every split of a character), or in 4 KiB
        # pieces past 64 KiB (the 5 MB reply): check's verdict.
        live = contract.stream()
        step = 4096 if len(raw) > 65536 else 1
        for i in range(0, len(raw), step):
            live.feed(raw[i : i + step])
        assert live.finish().to_json() == text, "streamed: check's verdict"
        # As text, every byte a character (Latin-1: any byte at or past 0x80 makes a
        # str that is not ASCII, which vouch itself makes UTF-8): the verdict on that
        # str's own UTF-8 bytes.
        as_text = raw.decode("latin-1")
        # And with characters of every width in place of some letters (the audit's
        # replies are ASCII): the hostile shapes through vouch's own UTF-8.
        wide = as_text.replace("a", "ä").replace("e", "€").replace("o", "😀")
        for text_reply in (as_text, wide):
            want = contract.check(text_reply.encode()).to_json()
            assert contract.check(text_reply).to_json() == want
            assert contract.check(text_reply, value=True).to_json() == want
            texts.append(text_reply)
            wants.append(want)
        # As the model's text where it is UTF-8; a byte that is not becomes a lone
        # surrogate, which has no UTF-8: refused where it stands, as its bytes
        # (surrogatepass's) are.
        escaped = raw.decode("utf-8", "surrogateescape")
        if is_utf8(raw):
            assert contract.check(escaped).to_json() == text
        else:
            lone = contract.check(escaped)
            assert lone.to_json() == contract.check(escaped.encode("utf-8", "surrogatepass")).to_json()
            assert lone.outcome == "refused" and lone.problems[0].code == "not_json"
        # Every getter, on every verdict.
        _ = (v.value, v.json, v.problems, v.repairs, v.findings, v.reask(), repr(v))
        out.append({"outcome": v.outcome, "passed": v.passed, "codes": [p.code for p in v.problems], "text": text})
    many: List[Union[str, bytes]] = list(raws)
    assert [v.to_json() for v in contract.check_many(many)] == [o["text"] for o in out], "check_many: check's verdicts"
    assert [v.to_json() for v in contract.check_many(texts)] == wants, "check_many on text: the text's UTF-8's verdicts"
    sys.stdout.write(json.dumps([{k: o[k] for k in ("outcome", "passed", "codes")} for o in out]))


if __name__ == "__main__":
    main()
