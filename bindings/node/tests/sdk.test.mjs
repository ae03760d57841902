// rounds() and streamCheck() with the OpenAI Node SDK as the user's own client,
// against a scripted fake on loopback: what the model was sent is asserted, not assumed.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import OpenAI from "openai";
import { Contract, rounds, streamCheck } from "vouch";
import { EXAMPLES, fakeModel } from "./common.mjs";

const plate = new Contract(readFileSync(join(EXAMPLES, "contracts/plate.json")));
const GOOD = '{"productPresent":false,"productTextPresent":false,"garbledText":false}';
const FOUND = '{"productPresent":true,"productTextPresent":false,"garbledText":false}';

function callWith(baseURL) {
  const client = new OpenAI({ baseURL, apiKey: "sk-test-not-a-key", maxRetries: 0 });
  return async (messages) => (await client.chat.completions.create({ model: "fake", messages })).choices[0].message.content;
}

test("rounds: a refusal is asked again in the core's words, then the answer is handed over", async () => {
  const fake = await fakeModel(["{}", GOOD]);
  try {
    const got = await rounds(plate, callWith(fake.baseURL), { maxRounds: 2, messages: [{ role: "system", content: "You read plates." }, { role: "user", content: "Look." }] });
    assert.equal(got.outcome, "accepted");
    assert.equal(got.source, "model");
    assert.equal(got.passed, true);
    assert.deepEqual(got.value, JSON.parse(GOOD));
    assert.equal(got.rounds.length, 2);
    assert.equal(fake.seen.length, 2);
    const [first, second] = fake.seen.map((r) => r.messages);
    assert.equal(first[0].content, `You read plates.\n\n${plate.prompt()}`, "the contract's instructions after the caller's own");
    assert.equal(first.length, 2);
    // The second ask: the refused reply as the assistant's, then the core's re-ask.
    assert.deepEqual(second.slice(0, 2), first);
    assert.deepEqual(second[2], { role: "assistant", content: "{}" });
    assert.deepEqual(second[3], { role: "user", content: plate.check("{}").reask() });
  } finally {
    await fake.close();
  }
});

test("rounds: every round refused, the last good value is returned, marked", async () => {
  const fake = await fakeModel(["nope", "", "[]"]);
  try {
    const fallback = JSON.parse(GOOD);
    const got = await rounds(plate, callWith(fake.baseURL), { maxRounds: 3, fallback });
    assert.equal(got.outcome, "refused");
    assert.equal(got.source, "fallback");
    assert.equal(got.passed, false, "a fallback never passes as a fresh answer");
    assert.deepEqual(got.value, fallback);
    assert.deepEqual(got.rounds.map((v) => v.outcome), ["refused", "refused", "refused"]);
    assert.deepEqual(got.rounds[1].problems.map((p) => p.code), ["empty_reply"]);
    assert.equal(fake.seen.length, 3, "no fourth call");
    // An empty reply is not sent back as the assistant's message.
    assert.ok(!fake.seen[2].messages.some((m) => m.role === "assistant" && m.content === ""));
  } finally {
    await fake.close();
  }
});

test("rounds: a reply refused for its size is not sent back, only the re-ask saying how large", async () => {
  const small = new Contract({ type: "object", "x-vouch": { limits: { max_bytes: 64 } } });
  const big = JSON.stringify({ note: "x".repeat(100) });
  const fake = await fakeModel([big, "[1]", "{}"]);
  try {
    const got = await rounds(small, callWith(fake.baseURL), { maxRounds: 3, messages: [{ role: "user", content: "Look." }] });
    assert.equal(got.outcome, "accepted");
    const [, second, third] = fake.seen.map((s) => s.messages);
    assert.deepEqual(second.slice(2), [{ role: "user", content: small.check(big).reask() }]);
    assert.match(second[2].content, /expected at most 64 bytes/);
    // A refusal within the limit is sent back as ever.
    assert.deepEqual(third.slice(3), [
      { role: "assistant", content: "[1]" },
      { role: "user", content: small.check("[1]").reask() },
    ]);
  } finally {
    await fake.close();
  }
});

test("rounds: no fallback, a fallback the contract refuses, a finding, and a bad budget", async () => {
  const fake = await fakeModel(["{}", "{}", FOUND]);
  try {
    const none = await rounds(plate, callWith(fake.baseURL), { maxRounds: 1, fallback: { productPresent: "no" } });
    assert.equal(none.source, null, "a fallback that fails the contract is not handed over");
    assert.equal(none.value, undefined);
    assert.equal(none.fallback.outcome, "refused");
    const found = await rounds(plate, callWith(fake.baseURL), { maxRounds: 2 });
    assert.equal(found.outcome, "accepted");
    assert.equal(found.passed, false, "accepted with a finding is not a pass");
    assert.equal(found.rounds.at(-1).findings[0].path, "/productPresent");
    await assert.rejects(rounds(plate, async () => GOOD, { maxRounds: 0 }), RangeError);
    await assert.rejects(rounds(plate, async () => 42), TypeError);
  } finally {
    await fake.close();
  }
});

test("streamCheck: the SDK's stream is stopped at the first certain refusal; finish() is check's verdict", async () => {
  const pieces = ['{"productPresent": ', "nu", "ll, ", '"productTextPresent": false, "garbledText": false}'];
  const fake = await fakeModel([{ stream: pieces }, { stream: ['{"productPresent": fal', 'se, "productTextPresent": false,', ' "garbledText": false}'] }]);
  try {
    const client = new OpenAI({ baseURL: fake.baseURL, apiKey: "sk-test-not-a-key", maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: "fake", messages: [], stream: true });
    const live = plate.stream();
    const seen = [];
    for await (const progress of streamCheck(live, stream)) {
      seen.push(progress);
      if (progress === "refused") stream.controller.abort();
    }
    assert.deepEqual(seen, ["pending", "refused"], "stopped after `nu`: no completion of it is a boolean");
    assert.equal(live.decidedAt, '{"productPresent": n'.length, "certain at the n: null is the only word it begins");
    assert.equal(live.problems[0].path, "/productPresent");
    const refused = live.finish();
    assert.equal(refused.toJSON(), plate.check('{"productPresent": nu').toJSON());

    const good = await client.chat.completions.create({ model: "fake", messages: [], stream: true });
    for await (const progress of streamCheck(live, good)) assert.equal(progress, "pending");
    const verdict = live.finish();
    assert.equal(verdict.passed, true, verdict.toJSON());
    assert.equal(verdict.toJSON(), plate.check(GOOD.replace(/:/g, ": ").replace(/,/g, ", ")).toJSON());
  } finally {
    await fake.close();
  }
});

test("streamCheck reads one choice's deltas by their index: another choice's (n > 1) is never fed into this reply", async () => {
  // Two choices interleaved, as the API streams n = 2: each chunk holds one choice's delta.
  const second = '{"productPresent": "no"}';
  const firstPieces = ['{"productPresent": false, ', '"productTextPresent": false, ', '"garbledText": false}'];
  async function* chunks() {
    for (let i = 0; i < firstPieces.length; i++) {
      yield { choices: [{ index: 0, delta: { content: firstPieces[i] }, finish_reason: null }] };
      if (i === 0) yield { choices: [{ index: 1, delta: { content: second }, finish_reason: null }] };
    }
    // Both choices in one chunk, and a choice written without its index (0, as the SDK reads it).
    yield { choices: [{ index: 1, delta: { content: " " }, finish_reason: "stop" }, { delta: { content: "" }, finish_reason: "stop" }] };
  }
  const live = plate.stream();
  for await (const progress of streamCheck(live, chunks())) assert.equal(progress, "pending");
  const verdict = live.finish();
  assert.equal(verdict.passed, true, verdict.toJSON());
  assert.equal(verdict.toJSON(), plate.check(firstPieces.join("")).toJSON());
  // The second choice, asked for by its index: its own reply, refused.
  const other = plate.stream();
  const seen = [];
  for await (const progress of streamCheck(other, chunks(), { index: 1 })) seen.push(progress);
  assert.deepEqual(seen.at(-1), "refused");
  assert.equal(other.finish().toJSON(), plate.check(second).toJSON());
});
