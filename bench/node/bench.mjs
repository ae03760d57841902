// Replies per second on the shared bench corpus (small.jsonl), one process, one core:
// vouch's Node binding (check, value built) beside JSON.parse + Ajv 8 (compiled once)
// and Zod 4's safeParse(JSON.parse(raw)); then checkMany on 1 and 2 threads. Run by
// bench/node/run, which says how. Best of 5, the paths taking turns.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const require = createRequire(join(process.env.VOUCH_NODE_PKG, "package.json"));
const { Contract } = require("vouch");
const Ajv2020 = require("ajv/dist/2020").default;
const { z } = require("zod");

const [corpus, contracts, mode] = process.argv.slice(2);
const replies = readFileSync(corpus, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
const names = [...new Set(replies.map((r) => r.contract))].sort();
const schemas = Object.fromEntries(names.map((n) => [n, readFileSync(join(contracts, `${n}.schema.json`), "utf8")]));

// The corpus contracts as a Zod user writes them (what the Pydantic bench's models say).
const ZOD = {
  plate_check: z.strictObject({ productPresent: z.boolean(), productTextPresent: z.boolean(), garbledText: z.boolean() }),
  eligibility_verdict: z.object({
    verdict: z.enum(["eligible", "maybe", "not_eligible"]),
    matchScore: z.int().min(0).max(100).optional(),
    summary: z.string().min(1),
    criteria: z.array(z.object({ criterion: z.string(), status: z.enum(["pass", "partial", "fail", "unknown"]), reason: z.string() })),
    recommendations: z.array(z.string()).optional(),
  }),
};

/** Fresh strings each round, as replies arrive from a client (no V8 string reused
 * with a flattened or cached form from an earlier round). */
function fresh() {
  return replies.map((r) => [r.contract, Buffer.from(r.raw, "utf8").toString("utf8"), r.fault]);
}

function timed(rows, rounds = 5) {
  const best = {};
  const counts = {};
  for (let k = 0; k < rounds; k++) {
    for (const [name, judge] of rows) {
      const batch = fresh();
      const start = process.hrtime.bigint();
      let accepted = 0;
      let faultyAccepted = 0;
      for (const [contract, raw, fault] of batch) {
        const ok = judge[contract](raw);
        if (ok) {
          accepted++;
          if (fault !== null) faultyAccepted++;
        }
      }
      const took = Number(process.hrtime.bigint() - start) / 1e9;
      best[name] = Math.min(best[name] ?? Infinity, took);
      counts[name] = [accepted, faultyAccepted];
    }
  }
  return rows.map(([name]) => ({ name, seconds: best[name], per_s: replies.length / best[name], accepted: counts[name][0], faulty_accepted: counts[name][1] }));
}

/** The peers' path as their users write it: JSON.parse, unreadable text refused, then `judge`. */
function parsed(judge) {
  return (raw) => {
    let value;
    try {
      value = JSON.parse(raw);
    } catch {
      return false;
    }
    return judge(value);
  };
}

let sink = 0;
if (mode === "--many") {
  // checkMany over the whole corpus per contract (it crosses in chunks itself).
  const vc = Object.fromEntries(names.map((n) => [n, new Contract(schemas[n])]));
  const out = [];
  for (const values of [false, true]) {
    let best = Infinity;
    for (let k = 0; k < 5; k++) {
      const batch = fresh();
      const per = Object.fromEntries(names.map((n) => [n, batch.filter((r) => r[0] === n).map((r) => r[1])]));
      const start = process.hrtime.bigint();
      for (const n of names) {
        for (const v of await vc[n].checkMany(per[n])) if (values && v.accepted) sink += v.value === null ? 0 : 1;
      }
      best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e9);
    }
    out.push(replies.length / best);
  }
  process.stdout.write(JSON.stringify(out));
} else {
  const vc = Object.fromEntries(names.map((n) => [n, new Contract(schemas[n])]));
  const ajv = new Ajv2020({ strict: false });
  const av = Object.fromEntries(names.map((n) => [n, ajv.compile(JSON.parse(schemas[n]))]));
  const each = (f) => Object.fromEntries(names.map((n) => [n, f(n)]));
  const rows = timed([
    ["vouch check + value", each((n) => (raw) => {
      const v = vc[n].check(raw);
      if (!v.accepted) return false;
      sink += v.value === null ? 0 : 1; // the value is built: what a caller pays
      return true;
    })],
    ["vouch check (verdict only)", each((n) => (raw) => vc[n].check(raw).accepted)],
    ["JSON.parse + Ajv 8", each((n) => parsed((value) => av[n](value)))],
    ["Zod 4 safeParse(JSON.parse)", each((n) => parsed((value) => ZOD[n].safeParse(value).success))],
  ]);
  // checkMany with the check on 1 and on 2 worker threads (the process may use both
  // cores: the event loop's thread copies the strings out of V8 on one), and, where
  // taskset is on the machine, the whole process held to one core.
  const many = {};
  const runs = [["1", [], 1], ["2", [], 2]];
  if (spawnSync("taskset", ["-c", "0", "true"]).status === 0) runs.push(["1core", ["taskset", "-c", "0"], 1]);
  // Three rounds, the settings taking turns, each keeping its best: one process
  // after another, a slow spell of the shared host otherwise falls on one
  // setting and moves the ratio more than the setting does.
  for (let round = 0; round < 3; round++) {
    for (const [key, prefix, threads] of runs) {
      const argv = [...prefix, process.execPath, fileURLToPath(import.meta.url), corpus, contracts, "--many"];
      const r = spawnSync(argv[0], argv.slice(1), {
        env: { ...process.env, RAYON_NUM_THREADS: String(threads) },
        encoding: "utf8",
      });
      if (r.status !== 0) throw new Error(r.stderr);
      const got = JSON.parse(r.stdout);
      many[key] = many[key] ? many[key].map((x, i) => Math.max(x, got[i])) : got;
    }
  }
  process.stdout.write(JSON.stringify({ replies: replies.length, rows, check_many: many, sink }));
}
