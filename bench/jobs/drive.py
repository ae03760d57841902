#!/usr/bin/env python3
"""Drive N jobs through `vouch serve`'s job API and report what happened.

    drive.py --post URL[,URL...] --poll URL[,URL...] --jobs 10000 --upstream URL

Posts N chat completion jobs (tagged bench-job-I, round-robin over the --post
replicas, from THREADS keep-alive connections), then polls each job (from the
--poll replicas, the one after the one it was posted to) until it is finished.
Times come from the job records themselves (created_ms, started_ms,
finished_ms, all written by the gateway): 202 to started, 202 to done. Lost:
jobs not finished, or finished with anything but an accepted answer. Duplicated:
jobs the fake upstream (FAKE_UPSTREAM_COUNT=1) was called for more than once.
Prints one line of JSON.
"""

import argparse
import http.client
import json
import sys
import threading
import time
import urllib.parse


def connect(url):
    u = urllib.parse.urlsplit(url)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=30)


def request(conn, method, path, body=None):
    headers = {"content-type": "application/json"} if body is not None else {}
    conn.request(method, path, body=body, headers=headers)
    r = conn.getresponse()
    return r.status, r.read()


def body_of(i):
    return json.dumps({
        "model": "fake",
        "messages": [{"role": "user", "content": f"bench-job-{i}: read back the plate"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "plate", "schema": {}}},
    })


def pct(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--post", required=True)
    ap.add_argument("--poll", required=True)
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--timeout", type=float, default=600)
    a = ap.parse_args()
    post, poll = a.post.split(","), a.poll.split(",")
    ids = [None] * a.jobs
    errors = []

    def poster(k):
        conns = [connect(u) for u in post]
        for i in range(k, a.jobs, a.threads):
            r = i % len(post)
            for _ in range(100):
                status, data = request(conns[r], "POST", "/v1/jobs", body_of(i))
                if status == 202:
                    ids[i] = json.loads(data)["id"]
                    break
                if status in (429, 503):
                    time.sleep(0.05)
                    continue
                errors.append((i, status, data[:200]))
                break

    started = time.time()
    threads = [threading.Thread(target=poster, args=(k,)) for k in range(a.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    posted_s = time.time() - started

    records = {}
    deadline = time.time() + a.timeout

    def poller(k):
        conns = [connect(u) for u in poll]
        mine = [i for i in range(k, a.jobs, a.threads) if ids[i]]
        while mine and time.time() < deadline:
            left = []
            for i in mine:
                status, data = request(conns[(i + 1) % len(poll)], "GET", f"/v1/jobs/{ids[i]}")
                rec = json.loads(data) if status == 200 else None
                if rec and rec["status"] in ("done", "cancelled"):
                    records[i] = rec
                else:
                    left.append(i)
            mine = left
            if mine:
                time.sleep(0.05)

    threads = [threading.Thread(target=poller, args=(k,)) for k in range(a.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    accepted = [r for r in records.values() if r.get("response", {}).get("outcome") == "accepted"]
    lost = a.jobs - len(accepted)
    to_start = [r["started_ms"] - r["created_ms"] for r in accepted if r.get("started_ms")]
    to_done = [r["finished_ms"] - r["created_ms"] for r in accepted if r.get("finished_ms")]
    first = min((r["created_ms"] for r in accepted), default=0)
    last = max((r["finished_ms"] for r in accepted), default=0)
    status, data = request(connect(a.upstream), "GET", "/counts")
    counts = json.loads(data)
    out = {
        "jobs": a.jobs,
        "accepted": len(accepted),
        "lost": lost,
        "post_errors": len(errors),
        "duplicated": counts.get("repeated"),
        "upstream_calls": counts.get("calls"),
        "attempts_over_1": sum(1 for r in accepted if r.get("attempts", 1) > 1),
        "posted_per_s": round(a.jobs / posted_s),
        "jobs_per_s": round(len(accepted) / ((last - first) / 1000)) if last > first else None,
        "to_started_ms": {"p50": pct(to_start, 50), "p99": pct(to_start, 99)},
        "to_done_ms": {"p50": pct(to_done, 50), "p99": pct(to_done, 99)},
    }
    print(json.dumps(out))
    if errors:
        print(f"first post errors: {errors[:3]}", file=sys.stderr)


if __name__ == "__main__":
    main()
