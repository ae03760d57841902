"""contract.stream(): a reply checked while it streams, stopped at the first
certain refusal, and finish() equal to check() on the whole reply. Fed by
the OpenAI SDK's stream from an SSE fake on loopback, and piece by piece."""

from __future__ import annotations

import json
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, List

import pytest
from openai import OpenAI

import vouch
from conftest import ROOT

PLATE = vouch.Contract((ROOT / "examples/contracts/plate.json").read_bytes())
CASES = [
    '{"productPresent": false, "productTextPresent": false, "garbledText": false}',
    '{"productPresent": "no", "productTextPresent": false, "garbledText": false}',
    '{"productPresent": true, "productTextPresent": false, "garbledText": false}',
    '{"productPresent": false, "productTextPresent": false',
    '{"productPresent": false, "productTextPresent": false, "garbledText": false} and more',
    "Sure! Here it is: {}",
    '{"productPresent": false, "productTextPresent": false, "garbledText": false, "note": "é€😀"}',
    "",
]


@pytest.mark.parametrize("raw", CASES)
def test_finish_is_check_whatever_the_pieces(raw: str) -> None:
    want = PLATE.check(raw).to_json()
    rng = random.Random(raw)
    data = raw.encode()
    for _ in range(20):
        stream = PLATE.stream()
        at = 0
        while at < len(data):
            n = rng.randint(1, 7)
            # Bytes cut anywhere, a UTF-8 character split across two pieces included.
            stream.feed(data[at : at + n])
            at += n
        assert stream.received == len(data)
        assert stream.finish().to_json() == want
        assert stream.received == 0, "finish() starts the check again"


def test_a_refusal_is_known_as_soon_as_it_is_certain() -> None:
    stream = PLATE.stream()
    stream.feed('{"productPresent": false, "productTextPresent": tr')
    assert stream.partial == {"productPresent": False}, "the value so far, for a display"
    stream.finish()
    assert stream.feed('{"productPresent": ') == "pending"
    assert stream.partial == {}
    assert stream.feed('"n') == "refused"
    assert stream.decided_at == len('{"productPresent": "')
    assert [(p.code, p.path) for p in stream.problems] == [("wrong_type", "/productPresent")]
    assert stream.progress == "refused"
    with pytest.raises(TypeError, match="a piece must be str or bytes"):
        stream.feed(3)  # type: ignore[arg-type]


class SSE:
    """An OpenAI-compatible streaming endpoint: the reply in small deltas."""

    def __init__(self, reply: str) -> None:
        self.delivered = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("content-length", "0")))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                try:
                    for i in range(0, len(reply), 3):
                        chunk = {
                            "id": "c",
                            "object": "chat.completion.chunk",
                            "created": 0,
                            "model": "fake",
                            "choices": [{"index": 0, "delta": {"content": reply[i : i + 3]}, "finish_reason": None}],
                        }
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                        fake.delivered += 1
                    self.wfile.write(b"data: [DONE]\n\n")
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.mark.parametrize("raw", CASES[:3])
def test_through_the_openai_sdk_stream(raw: str) -> None:
    fake = SSE(raw)
    client = OpenAI(base_url=fake.url, api_key="sk-test", max_retries=0)
    stream = PLATE.stream()
    pieces: List[str] = []
    with client.chat.completions.create(model="fake", messages=[{"role": "user", "content": "?"}], stream=True) as chunks:
        for chunk in chunks:
            piece = chunk.choices[0].delta.content or "" if chunk.choices else ""
            pieces.append(piece)
            if stream.feed(piece) == "refused":
                break  # stop the model: the rest cannot make it acceptable
    fake.server.shutdown()
    verdict = stream.finish()
    full = PLATE.check(raw)
    assert verdict.outcome == full.outcome
    if full.accepted:
        assert "".join(pieces) == raw and verdict.to_json() == full.to_json()
    else:
        # Stopped early: fewer pieces read than the reply has.
        assert len("".join(pieces)) < len(raw)
        assert verdict.problems[0].code == full.problems[0].code
