// Every bundled example reply through the binding gives toJSON() equal, byte for
// byte, to `vouch check --json` (the CLI is the oracle), whichever way it is given.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Contract } from "vouch";
import { EXAMPLES, vouch } from "./common.mjs";

const EXPECT = JSON.parse(readFileSync(join(EXAMPLES, "replies/expect.json"), "utf8"));

test("the example cases are all there", () => {
  assert.ok(Object.keys(EXPECT).length >= 32, "examples/replies/expect.json lost cases");
});

const contracts = new Map();
function contractOf(path) {
  if (!contracts.has(path)) contracts.set(path, new Contract(readFileSync(path)));
  return contracts.get(path);
}

for (const [name, spec] of Object.entries(EXPECT).sort()) {
  test(`toJSON() equals the CLI byte for byte: ${name}`, async () => {
    const contractPath = join(EXAMPLES, spec.contract);
    const replyPath = join(EXAMPLES, "replies", name);
    const cli = vouch(["check", "--json", "-c", contractPath, replyPath]);
    assert.equal(cli.status, spec.exit, cli.stderr.toString());
    const line = cli.stdout.toString("utf8");
    assert.ok(line.endsWith("\n") && line.split("\n").length === 2, line);
    const text = line.slice(0, -1);
    const contract = contractOf(contractPath);
    const raw = readFileSync(replyPath);
    const verdict = contract.check(raw);
    assert.equal(verdict.toJSON(), text);
    // A string gives the same verdict when the bytes are UTF-8 (a string cannot hold
    // bytes that are not: the Buffer is how such a reply is given).
    const decoded = new TextDecoder("utf-8", { fatal: false }).decode(raw);
    if (Buffer.from(decoded, "utf8").equals(raw)) assert.equal(contract.check(decoded).toJSON(), text);
    assert.deepEqual((await contract.checkMany([raw, raw])).map((v) => v.toJSON()), [text, text]);
    // The JavaScript view agrees with the JSON one.
    const shown = JSON.parse(text);
    assert.equal(verdict.outcome, shown.outcome);
    assert.equal(verdict.outcome, spec.outcome);
    assert.equal(verdict.passed, shown.pass);
    assert.equal(verdict.passed, spec.pass);
    assert.deepEqual(verdict.problems.map((p) => JSON.parse(JSON.stringify(p))), shown.problems);
    assert.deepEqual(verdict.findings, shown.findings);
    assert.deepEqual(verdict.repairs, shown.repairs);
    // However the verdict is held (the reply's own text for a pass as sent, the line,
    // a whole native verdict from a stream), every field reads alike, in any order.
    const live = contract.stream();
    live.feed(raw);
    const held = [contract.check(raw), (await contract.checkMany([raw]))[0], live.finish()];
    const plain = (x) => (x === undefined ? x : JSON.parse(JSON.stringify(x)));
    for (const other of held) {
      assert.equal(other.toJSON(), text);
      for (const field of ["value", "json", "outcome", "passed", "accepted", "problems", "repairs", "findings"]) {
        assert.deepEqual(plain(other[field]), plain(verdict[field]), field);
      }
      assert.equal(other.reask(), verdict.reask());
    }
    // `check` holds a certain refusal unreported until it is read: each field read
    // first, before anything else, is `checkMany`'s (which reports at once).
    const [eager] = await contract.checkMany([raw]);
    for (const field of ["problems", "outcome", "passed", "accepted", "value", "json", "repairs", "findings", "reask", "toJSON"]) {
      const fresh = contract.check(raw);
      const read = (v) => (field === "reask" || field === "toJSON" ? v[field]() : plain(v[field]));
      assert.deepEqual(read(fresh), read(eager), field);
    }
    if (verdict.accepted) {
      assert.deepEqual(verdict.value, shown.value);
      assert.deepEqual(JSON.parse(verdict.json), shown.value);
      assert.equal(verdict.reask(), null);
    } else {
      assert.equal(verdict.value, undefined);
      assert.equal(verdict.json, undefined);
      assert.equal(typeof verdict.reask(), "string");
    }
  });
}
