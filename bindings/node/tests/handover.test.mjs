// The hand-over: a reply that passed as sent is read from the caller's own text, any
// other from the verdict's line, and neither can be changed by the caller afterwards.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Contract } from "vouch";
import { checkedBytes } from "./common.mjs";

const contract = new Contract({
  type: "object",
  required: ["n"],
  properties: { n: { type: "integer", "x-vouch": { repair: ["coerce"] } }, s: { type: "string" } },
});

test("a pass as sent hands over the reply's own value and vouched text", () => {
  const v = contract.check(' \n{"n": 1, "s": "\\u00e9"}\t');
  assert.equal(v.passed, true);
  assert.deepEqual(v.value, { n: 1, s: "é" });
  assert.equal(v.json, '{"n": 1, "s": "\\u00e9"}');
  assert.deepEqual([v.problems, v.repairs, v.findings], [[], [], []]);
  assert.equal(v.toJSON(), '{"outcome":"accepted","pass":true,"value":{"n":1,"s":"é"},"repairs":[],"findings":[],"problems":[]}');
  assert.equal(v.reask(), null);
});

test("a repaired reply hands over the repaired value, not the reply's", () => {
  const v = contract.check('{"n": "80"}');
  assert.equal(v.passed, true);
  assert.deepEqual(v.value, { n: 80 });
  assert.equal(v.json, '{"n": 80}'); // the repaired scalar written in place of the one sent
  assert.equal(v.repairs.length, 1);
  assert.equal(v.repairs[0].rule, "coerce");
});

test("a Buffer reused after check or checkMany changes no verdict", async () => {
  const buf = Buffer.from('{"n": 7}');
  const v = contract.check(buf);
  const bad = Buffer.from('{"n": 7.5}');
  const r = contract.check(bad);
  const pending = contract.checkMany(Array.from({ length: 5000 }, (_, i) => (i === 4999 ? buf : "{}")));
  buf.write('{"n": 9}');
  bad.write('{"n": "x"');
  const many = await pending;
  assert.deepEqual(v.value, { n: 7 });
  assert.deepEqual(many[4999].value, { n: 7 });
  assert.equal(many[0].problems[0].code, "missing");
  assert.equal(r.problems[0].path, "/n");
  assert.match(r.reask(), /\/n/);
});

test("a refusal's fields come from its line; its re-ask message from the core", () => {
  const v = contract.check('{"n": 1.5, "extra": true}');
  assert.equal(v.accepted, false);
  assert.equal(v.outcome, "refused");
  assert.equal(v.value, undefined);
  assert.equal(v.json, undefined);
  assert.ok(v.problems.length >= 1);
  assert.equal(v.problems[0].class, "no_answer"); // a wrong type: the model did not answer
  assert.equal(typeof v.reask(), "string");
  assert.ok(v.reask().length > 0);
});

test("a string is read as its UTF-8; one with an unpaired surrogate (no UTF-8) is refused where it stands, never read as U+FFFD", async () => {
  // Well-formed: a pair, a wide character, a "\\ud800" escape (refused by the core itself): Buffer.from's bytes.
  for (const raw of ['{"n": 1, "s": "\ud83d\ude00 é"}', '{"n": 1, "s": "\\ud800"}']) {
    const asBytes = contract.check(Buffer.from(raw, "utf8"));
    assert.equal(contract.check(raw).toJSON(), asBytes.toJSON(), raw);
    assert.deepEqual(contract.check(raw).value, asBytes.value, raw);
    assert.equal((await contract.checkMany([raw]))[0].toJSON(), asBytes.toJSON(), raw);
  }
  // An unpaired surrogate (JSON.parse, so the OpenAI SDK, makes one of a "\\ud800" escape
  // in a response body): refused as not_json at its offset, where Buffer.from would have
  // written U+FFFD and the contract accepted a repair no one declared.
  for (const [raw, offset] of [['{"n": 1, "s": "a\ud800b"}', 16], ['{"n": 1, "s": "\udc00"}', 15], ['{"n": 1, "s": "é\udbff"}', 17], ['\ud800{"n": 1}', 0]]) {
    const v = contract.check(raw);
    assert.equal(contract.check(Buffer.from(raw, "utf8")).outcome, raw.startsWith("\ud800") ? "refused" : "accepted", raw);
    assert.equal(v.outcome, "refused", raw);
    assert.equal(v.value, undefined, raw);
    assert.deepEqual(v.problems.map((p) => [p.code, p.class, p.path, p.position?.offset]), [["not_json", "no_answer", "", offset]], raw);
    assert.equal(v.toJSON(), contract.check(checkedBytes(raw)).toJSON(), raw);
    const many = await contract.checkMany(['{"n": 1, "s": "x"}', raw, '{"n": 2, "s": "y"}']);
    assert.deepEqual(many.map((m) => m.outcome), ["accepted", "refused", "accepted"], raw);
    assert.equal(many[1].toJSON(), v.toJSON(), raw);
    assert.throws(() => contract.parse(raw), (e) => e.name === "VouchRefused" && e.verdict.problems[0].code === "not_json", raw);
  }
});

test("a long string (past the per-thread buffer) is read whole", () => {
  const long = '{"n": 1, "s": "' + "é".repeat(100_000) + '"}';
  const v = contract.check(long);
  assert.equal(v.passed, true);
  assert.equal(v.value.s.length, 100_000);
});

test("contracts collected by the GC free their slots, and a slot taken again answers for its new contract", async () => {
  const { setFlagsFromString } = await import("node:v8");
  const { runInNewContext } = await import("node:vm");
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc");
  const keep = new Contract({ type: "integer", maximum: 5 });
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 500; i++) new Contract({ type: "string", minLength: i });
    gc();
    await new Promise((r) => setImmediate(r));
    gc();
    const fresh = new Contract({ type: "boolean" });
    assert.equal(fresh.check("true").passed, true);
    assert.equal(fresh.check('"x"').passed, false);
    assert.equal(keep.check("5").passed, true);
    assert.equal(keep.check("6").passed, false);
  }
});

test("a contract compiled in a worker thread checks there, beside the main thread's", async () => {
  const { Worker } = await import("node:worker_threads");
  const main = new Contract({ type: "integer" });
  const code = `
    const { parentPort } = require("node:worker_threads");
    const { Contract } = require(${JSON.stringify(new URL("../dist/index.js", import.meta.url).pathname)});
    const c = new Contract({ type: "string" });
    parentPort.postMessage([c.check('"a"').passed, c.check("1").passed, c.check('"b"').value]);
  `;
  const got = await new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true });
    w.once("message", resolve);
    w.once("error", reject);
  });
  assert.deepEqual(got, [true, false, "b"]);
  assert.equal(main.check("1").passed, true);
  assert.equal(main.check('"a"').passed, false);
});

test("a refusal of a string with an unpaired surrogate asks again about the text that was checked", () => {
  const raw = '{"n": "\ud800"}';
  const v = contract.check(raw);
  const b = contract.check(checkedBytes(raw));
  assert.equal(v.accepted, false);
  assert.equal(v.reask(), b.reask());
  assert.equal(v.toJSON(), b.toJSON());
});

test("a certain refusal crosses back as 1, its problems written only when read", async () => {
  const { createRequire } = await import("node:module");
  // The package's own addon (the same file, so the same registry of contracts).
  const addon = createRequire(import.meta.url)("../vouch.node");
  const strict = new Contract({ type: "object", required: ["ok"], properties: { ok: { type: "boolean" } }, additionalProperties: false });
  for (const raw of ["{}", '{"ok": "yes"}', '{"ok": true, "extra": 1}', "true", "[]", "null", "not json", '{"ok": tr']) {
    assert.equal(addon.checkText(strict.native.id, raw), 1, raw);
    assert.equal(addon.checkBytes(strict.native.id, Buffer.from(raw)), 1, raw);
    const v = strict.check(raw);
    // Known at once, without the report.
    assert.deepEqual([v.outcome, v.accepted, v.passed, v.value, v.json, v.repairs, v.findings], ["refused", false, false, undefined, undefined, [], []], raw);
    // Written when read: the whole verdict, as checkMany reports it at once.
    const [eager] = await strict.checkMany([raw]);
    assert.ok(v.problems.length >= 1, raw);
    assert.deepEqual(JSON.parse(JSON.stringify(v.problems)), JSON.parse(JSON.stringify(eager.problems)), raw);
    assert.equal(v.toJSON(), eager.toJSON(), raw);
    assert.equal(v.reask(), eager.reask(), raw);
  }
  assert.equal(addon.checkText(strict.native.id, '{"ok": true}'), 0);
});

test("the hot calls read a string whole at every length around their buffer's, and refuse other values", async () => {
  const { createRequire } = await import("node:module");
  const addon = createRequire(import.meta.url)("../vouch.node");
  const text = new Contract({ type: "object", required: ["s"], properties: { s: { type: "string" } } });
  // The per-thread buffer keeps 16 Ki units free: a string of about that length is
  // read once into it or, where it may not all have fit, again whole; 64 Ki units is
  // where the UTF-8 it is made into gets a buffer of its own.
  for (const units of [16_382, 16_383, 16_384, 16_385, 65_534, 65_535, 65_536, 65_537, 200_000]) {
    for (const fill of ["a", "é", "😀"]) {
      let body = fill.repeat(Math.ceil((units - 8) / fill.length)).slice(0, units - 8);
      // Not half a surrogate pair at the end (that one is U+FFFD, tested above).
      if (/[\ud800-\udbff]$/.test(body)) body = body.slice(0, -1) + "a";
      const raw = '{"s": "' + body + '"}';
      const v = text.check(raw);
      assert.equal(v.passed, true, `${units} units of ${fill}`);
      assert.ok(v.value.s === body, `${units} units of ${fill}: another value`);
      // Cut one character short of its end: refused, so all of it was read.
      assert.equal(addon.checkText(text.native.id, raw.slice(0, -1)), 1, `${units} units of ${fill}, cut`);
      assert.equal(addon.checkBytes(text.native.id, Buffer.from(raw)), 0);
    }
  }
  for (const bad of [42, undefined, null, {}, ["{}"], true]) {
    assert.throws(() => addon.checkText(text.native.id, bad), TypeError, String(bad));
    assert.throws(() => addon.checkBytes(text.native.id, bad), (e) => e instanceof TypeError && /string or a Buffer/.test(e.message), String(bad));
  }
  assert.throws(() => addon.checkText(), TypeError);
  assert.throws(() => addon.checkText("x", "{}"), /contract id/);
  assert.throws(() => addon.checkText(987_654, "{}"), /no live contract/);
  assert.equal(JSON.parse(addon.checkBytes(text.native.id, Buffer.alloc(0))).problems[0].code, "empty_reply");
});
