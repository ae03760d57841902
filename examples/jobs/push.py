#!/usr/bin/env python3
"""Push a JSONL file of chat completion requests through `vouch serve`'s job
API, and write one result line per input line, in input order.

    python3 examples/jobs/push.py requests.jsonl --url http://127.0.0.1:8080 > results.jsonl

Each input line is a chat completion request body (its contract named as for
/v1/chat/completions). Each is posted to POST /v1/jobs with an Idempotency-Key
made of the file's digest and the line number, so running the script again
after it (or the gateway) stopped halfway posts nothing twice: the jobs
already posted are found again, and only their results are waited for.

Each output line is {"line", "job", "status_code", "outcome", "body"}: body is
exactly what /v1/chat/completions would have answered (the vouched completion,
or the 422 refusal with its problems). A line that is not JSON, or that the
gateway refuses to take as a job, gets {"line", "error"} in its place. Standard
library only. The token, if the gateway wants one, comes from VOUCH_TOKEN.
"""

import argparse
import hashlib
import http.client
import json
import os
import sys
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor


class Gateway:
    def __init__(self, url, token):
        u = urllib.parse.urlsplit(url)
        self.host, self.port = u.hostname, u.port or 80
        self.headers = {"authorization": f"Bearer {token}"} if token else {}

    def call(self, method, path, body=None, headers=None):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        h = dict(self.headers, **(headers or {}))
        if body is not None:
            h["content-type"] = "application/json"
        conn.request(method, path, body=body, headers=h)
        r = conn.getresponse()
        data = r.read()
        retry = r.getheader("retry-after")
        conn.close()
        return r.status, data, retry


def post(gw, digest, n, line):
    try:
        json.loads(line)
    except ValueError as e:
        return {"line": n, "error": f"not JSON: {e}"}
    while True:
        status, data, retry = gw.call("POST", "/v1/jobs", line.encode(), {"idempotency-key": f"{digest}-{n}"})
        if status == 202:
            return {"line": n, "job": json.loads(data)["id"]}
        if status in (429, 503):  # the queue is full, or the store is away: wait as told
            time.sleep(float(retry or 1))
            continue
        return {"line": n, "error": json.loads(data).get("error", {}).get("message", data.decode(errors="replace"))}


def wait(gw, item, poll):
    if "job" not in item:
        return item
    while True:
        status, data, _ = gw.call("GET", f"/v1/jobs/{item['job']}")
        if status != 200:
            return dict(item, error=f"GET answered {status}: {data.decode(errors='replace')[:200]}")
        job = json.loads(data)
        if job["status"] in ("done", "cancelled"):
            r = job["response"]
            return dict(item, status_code=r["status_code"], outcome=r["outcome"], body=r["body"])
        time.sleep(poll)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("requests", help="a JSONL file, one chat completion request per line")
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--parallel", type=int, default=16)
    ap.add_argument("--poll", type=float, default=0.2, help="seconds between polls of one job")
    a = ap.parse_args()
    with open(a.requests, "rb") as f:
        raw = f.read()
    digest = hashlib.sha256(raw).hexdigest()[:16]
    lines = [l for l in raw.decode().splitlines()]
    gw = Gateway(a.url, os.environ.get("VOUCH_TOKEN"))
    work = [(n, l) for n, l in enumerate(lines, 1) if l.strip()]
    with ThreadPoolExecutor(a.parallel) as pool:
        posted = list(pool.map(lambda nl: post(gw, digest, *nl), work))
        # map keeps the input order: results are written as the file ran.
        for result in pool.map(lambda item: wait(gw, item, a.poll), posted):
            sys.stdout.write(json.dumps(result) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
