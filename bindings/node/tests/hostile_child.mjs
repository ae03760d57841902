// hostile.test.mjs's child: CONTRACT DIR -> the verdict of each reply in DIR's index, as JSON.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Contract } from "vouch";

const [contractPath, dir] = process.argv.slice(2);
const contract = new Contract(readFileSync(contractPath));
const index = JSON.parse(readFileSync(join(dir, "index.json"), "utf8"));
const raws = index.map((e) => readFileSync(join(dir, e.file)));
const out = [];
for (const raw of raws) {
  const v = contract.check(raw);
  const text = v.toJSON();
  assert.equal(contract.check(raw.toString("latin1")).outcome !== undefined, true);
  const live = contract.stream();
  // A byte at a time (every split of a character), or in 4 KiB pieces for the replies
  // past 64 KiB (the 5 MB one).
  const step = raw.length > 65536 ? 4096 : 1;
  for (let i = 0; i < raw.length; i += step) live.feed(raw.subarray(i, i + step));
  assert.equal(live.finish().toJSON(), text, "streamed: check's verdict");
  // Every getter, on every verdict.
  void [v.value, v.json, v.problems, v.repairs, v.findings, v.reask(), live.partial, live.problems, live.decidedAt];
  out.push({ outcome: v.outcome, passed: v.passed, codes: v.problems.map((p) => p.code), text });
}
const many = await contract.checkMany(raws);
assert.deepEqual(many.map((v) => v.toJSON()), out.map((o) => o.text), "checkMany: check's verdicts, in order");
process.stdout.write(JSON.stringify(out.map(({ text, ...rest }) => rest)));
