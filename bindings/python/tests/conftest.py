"""Shared fixtures: the repository, the vouch CLI built from it (the oracle
for byte-for-byte equality), and a scripted OpenAI-compatible fake."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

ROOT = Path(__file__).resolve().parents[3]


def shared_dir() -> Path:
    """The shared material (VOUCH_SHARED, default ../shared): a test that needs it
    says so loudly without it, and fails under CI=true."""
    shared = Path(os.environ.get("VOUCH_SHARED", ROOT.parent / "shared"))
    if not (shared / "bench/gen.py").is_file():
        message = f"the shared material is not at {shared} (set VOUCH_SHARED)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return shared


def is_utf8(raw: bytes) -> bool:
    """Whether ``raw`` is UTF-8 (then a ``str`` of it reads as the bytes do)."""
    try:
        raw.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def bench_corpus(out: Path, small: int, large: int = 1) -> Path:
    """The shared bench corpus (``gen.py``: deterministic) written into ``out``:
    ``small.jsonl`` with ``small`` replies and ``large.jsonl`` with ``large``."""
    subprocess.run(
        [sys.executable, str(shared_dir() / "bench/gen.py"), "--out", str(out), "--small", str(small), "--large", str(large)],
        check=True,
        capture_output=True,
    )
    return out


@pytest.fixture(scope="session")
def vouch_bin() -> Path:
    """The vouch CLI: $VOUCH_BIN, else the workspace's debug or release build."""
    given = os.environ.get("VOUCH_BIN")
    candidates = [Path(given)] if given else [ROOT / "target/debug/vouch", ROOT / "target/release/vouch"]
    for c in candidates:
        if c.is_file():
            return c
    if shutil.which("cargo"):
        subprocess.run(["cargo", "build", "--quiet", "-p", "vouch-cli"], cwd=ROOT, check=True)
        return ROOT / "target/debug/vouch"
    pytest.fail(f"no vouch CLI at {candidates} and no cargo to build it")


class FakeModel:
    """An OpenAI-compatible chat endpoint on loopback answering a script of
    replies in order, recording each request's messages."""

    def __init__(self, replies: List[str]) -> None:
        self.replies = list(replies)
        self.seen: List[List[Dict[str, Any]]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length))
                fake.seen.append(body["messages"])
                content = fake.replies.pop(0) if fake.replies else ""
                answer = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "fake"),
                    "choices": [
                        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
                    ],
                }
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_model() -> Iterator[Any]:
    made: List[FakeModel] = []

    def start(replies: List[str]) -> FakeModel:
        m = FakeModel(replies)
        made.append(m)
        return m

    yield start
    for m in made:
        m.close()
