// checkMany checks on worker threads: the event loop keeps turning while 100,000
// replies are checked, and the verdicts are check's, in order.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Contract } from "vouch";
import { EXAMPLES } from "./common.mjs";

const plate = new Contract(readFileSync(join(EXAMPLES, "contracts/plate.json")));

test("a timer keeps ticking while checkMany checks 100,000 replies", async () => {
  const kinds = [
    (i) => `{"productPresent":${i % 3 === 0},"productTextPresent":false,"garbledText":false}`,
    (i) => `{"productPresent":false,"productTextPresent":false,"garbledText":"no ${i}"}`,
    (i) => `\`\`\`json\n{"productPresent":false,"productTextPresent":false,"garbledText":false}\n\`\`\``,
    (i) => `{"productPresent":false,"productPresent":true,"garbledText":false,"x":"${"y".repeat(i % 200)}"}`,
  ];
  const raws = Array.from({ length: 100_000 }, (_, i) => kinds[i % kinds.length](i));
  const ticks = [];
  const timer = setInterval(() => ticks.push(performance.now()), 2);
  const started = performance.now();
  const verdicts = await plate.checkMany(raws);
  const elapsed = performance.now() - started;
  clearInterval(timer);
  assert.equal(verdicts.length, raws.length);
  let worst = 0;
  for (let i = 1; i < ticks.length; i++) worst = Math.max(worst, ticks[i] - ticks[i - 1]);
  console.log(`checkMany: 100,000 replies in ${elapsed.toFixed(0)} ms; the timer ticked ${ticks.length} times, longest gap ${worst.toFixed(1)} ms`);
  assert.ok(ticks.length >= 10, `the timer ticked ${ticks.length} times in ${elapsed.toFixed(0)} ms`);
  // Held for the whole check, the loop would show one gap as long as all of it.
  assert.ok(worst < Math.max(100, elapsed / 4), `the event loop was held for ${worst.toFixed(1)} ms of ${elapsed.toFixed(0)}`);
  for (let i = 0; i < raws.length; i += 997) assert.equal(verdicts[i].toJSON(), plate.check(raws[i]).toJSON(), raws[i]);
  assert.deepEqual(
    [0, 1, 2, 3].map((i) => verdicts[i].outcome),
    ["accepted", "refused", "refused", "refused"], // a wrong type, a fence (plate declares no fence repair), a repeated key
  );
});

test("checkMany takes any iterable, Buffers too, and an empty one", async () => {
  assert.deepEqual(await plate.checkMany([]), []);
  function* gen() {
    yield Buffer.from("{}");
    yield "[]";
  }
  const v = await plate.checkMany(gen());
  assert.deepEqual(v.map((x) => x.problems[0].code), ["missing", "wrong_type"]);
});

test("a verdict has no truth value: the bug vouch exists for is not guessed at", () => {
  const v = plate.check("{}");
  assert.throws(() => `${v}`, TypeError);
  assert.throws(() => +v, TypeError);
  assert.equal(Object.prototype.toString.call(v), "[object Verdict]");
});

test("checkMany reads every string whole, however long, beside Buffers, and rejects other values", async () => {
  const text = new Contract({ type: "object", required: ["s"], properties: { s: { type: "string" } } });
  // The replies' UTF-16 units are copied into one buffer with 16 Ki units of room
  // kept at its end: strings about that long, and longer, are read again whole.
  const raws = [];
  for (const units of [1, 16_382, 16_383, 16_384, 16_385, 40_000, 16_384, 3]) {
    for (const fill of ["a", "é", "😀"]) {
      let body = fill.repeat(Math.ceil(units / fill.length)).slice(0, units);
      if (/[\ud800-\udbff]$/.test(body)) body = body.slice(0, -1) + "a";
      raws.push('{"s": "' + body + '"}', Buffer.from('{"s": "' + body + '"}'), '{"s": "' + body + '"');
    }
  }
  const many = await text.checkMany(raws);
  assert.equal(many.length, raws.length);
  for (let i = 0; i < raws.length; i++) {
    const one = text.check(raws[i]);
    assert.equal(many[i].toJSON(), one.toJSON(), `reply ${i}`);
    // Whole replies pass; each cut one character short is refused (all of it was read).
    assert.equal(many[i].passed, i % 3 !== 2, `reply ${i}`);
    if (many[i].passed) assert.ok(many[i].value.s === JSON.parse(raws[i].toString()).s, `reply ${i}: another value`);
  }
  await assert.rejects(text.checkMany(['{"s": ""}', 42]), /string or a Buffer/);
  await assert.rejects(text.checkMany([{}]), /string or a Buffer/);
});

test("checkMany keeps order across chunks cut by count and by size", async () => {
  // Chunks close at 256 replies or at 1 Mi UTF-16 units, one longer reply alone:
  // long and short replies mixed cross several of each, every verdict in its place.
  const text = new Contract({ type: "object", required: ["i"], properties: { i: { type: "integer" }, s: { type: "string", maxLength: 200_000 } } });
  const raws = [];
  for (let i = 0; i < 1_500; i++) {
    const long = i % 97 === 5 ? "x".repeat(i % 2 === 0 ? 300_000 : 1_100_000) : "";
    raws.push(i % 7 === 3 ? `{"i": "${i}"}` : `{"i": ${i}, "s": "${long}"}`);
  }
  const many = await text.checkMany(raws);
  assert.equal(many.length, raws.length);
  for (let i = 0; i < raws.length; i++) {
    const one = text.check(raws[i]);
    assert.equal(many[i].toJSON(), one.toJSON(), `reply ${i}`);
    if (many[i].accepted) assert.equal(many[i].value.i, i, `reply ${i} out of place`);
  }
  // Each long reply is refused (maxLength), each "i" as a string too: not all accepted, not all refused.
  assert.ok(many.some((v) => v.accepted) && many.some((v) => !v.accepted));
  assert.ok(many.filter((v, i) => raws[i].length > 200_000).every((v) => v.problems[0]?.code === "too_long"));
});

test("checkMany's native half refuses a sparse array of any length without reserving for it", async () => {
  const { createRequire } = await import("node:module");
  const addon = createRequire(import.meta.url)("../vouch.node");
  const compiled = addon.compile('{"type": "boolean"}');
  const sparse = ["true"];
  sparse.length = 4_000_000_000;
  assert.throws(() => compiled.checkMany(sparse), /string or a Buffer/);
  const answers = await compiled.checkMany(["true", Buffer.from("false"), "1"]);
  assert.deepEqual([...answers.kinds], [0, 0, 2]);
  assert.equal(answers.lines.length, 1);
  assert.equal(JSON.parse(answers.lines[0]).problems[0].code, "wrong_type");
});
