// What the package takes from its caller: replies as any bytes, contracts only as
// JSON (never silently turned into something else), a stream's split surrogate
// pair, objects built from JSON (a "__proto__" key an own property), integers a
// number would round, Zod regexes vouch would read otherwise, rounds' bounds.
import assert from "node:assert/strict";
import { test } from "node:test";
import { z } from "zod";
import { Contract, ContractError, rounds } from "vouch";
import { checkedBytes } from "./common.mjs";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const BIG_CHILD = fileURLToPath(new URL("./big_reply_child.mjs", import.meta.url));

const one = new Contract({ enum: [1] });

/** `bytes` as every kind of bytes a reply may come as: each views exactly them. */
function viewsOf(bytes) {
  const padded = new Uint8Array(bytes.length + 4);
  padded.set(bytes, 2);
  return [
    ["Uint8Array", new Uint8Array(bytes)],
    ["Uint8Array at an offset", padded.subarray(2, 2 + bytes.length)],
    ["DataView at an offset", new DataView(padded.buffer, 2, bytes.length)],
    ["Int8Array", new Int8Array(new Uint8Array(bytes).buffer)],
    ["ArrayBuffer", new Uint8Array(bytes).buffer],
  ];
}

test("a reply as any ArrayBufferView or ArrayBuffer is read as its bytes, in every call", async () => {
  const text = '{"n": 1}';
  const bytes = Buffer.from(text);
  const c = new Contract({ type: "object", properties: { n: { type: "integer" } } });
  for (const [name, view] of [...viewsOf(bytes), ["Buffer", Buffer.from(bytes)]]) {
    const v = c.check(view);
    assert.equal(v.passed, true, name);
    assert.deepEqual(v.value, { n: 1 }, name);
    assert.equal(v.json, c.check(text).json, name);
    assert.equal(v.toJSON(), c.check(text).toJSON(), name);
    assert.deepEqual(c.parse(view), { n: 1 }, name);
    const [many] = await c.checkMany([view]);
    assert.deepEqual(many.value, { n: 1 }, name);
    const s = c.stream();
    s.feed(view);
    assert.equal(s.finish().toJSON(), c.check(text).toJSON(), name);
    const asked = await rounds(c, () => view);
    assert.deepEqual(asked.value, { n: 1 }, name);
  }
  // The probe's two: a Uint8Array's "49" and a DataView's "[object DataView]".
  assert.equal(one.parse(new Uint8Array([0x31])), 1);
  const dv = one.check(new DataView(new Uint8Array([0x78, 0x31]).buffer, 1, 1));
  assert.equal(dv.passed, true);
  assert.equal(dv.toJSON(), one.check("1").toJSON());
  assert.equal(dv.value, 1);
  // Refused bytes keep their own text for the report.
  assert.equal(one.check(new Uint8Array([0x32])).toJSON(), one.check("2").toJSON());
});

test("a reply that is neither a string nor bytes is a TypeError, in every call", async () => {
  const says = (e) => e instanceof TypeError && /a reply is a string or a Buffer .*not (a number|an Object|an Array|null|undefined)/.test(e.message);
  for (const bad of [42, {}, [1], null, undefined]) {
    assert.throws(() => one.check(bad), says, String(bad));
    assert.throws(() => one.parse(bad), says, String(bad));
    await assert.rejects(one.checkMany([bad]), says, String(bad));
    if (bad != null) assert.throws(() => one.stream().feed(bad), says, String(bad));
  }
  await assert.rejects(rounds(one, () => 42), (e) => e instanceof TypeError && /must return the reply's text .*not a number/.test(e.message));
});

test("checkMany given one reply (a string or bytes) refuses it, not checking each character", async () => {
  for (const single of ["1", Buffer.from("1"), new Uint8Array([0x31])]) {
    await assert.rejects(one.checkMany(single), (e) => e instanceof TypeError && e.message === "checkMany takes an iterable of replies, not one reply");
  }
  assert.equal((await one.checkMany(["1", new Uint8Array([0x31])])).every((v) => v.passed), true);
});

test("a contract given as bytes is read as UTF-8 JSON text", () => {
  for (const [name, view] of viewsOf(Buffer.from('{"enum": [1]}'))) {
    const c = new Contract(view);
    assert.equal(c.check("1").passed, true, name);
    assert.equal(c.check("2").passed, false, name);
    assert.equal(c.document, '{"enum":[1]}', name);
  }
  assert.throws(() => new Contract(new Uint8Array([0xff])), (e) => e instanceof ContractError && /UTF-8/.test(e.message));
});

test("a contract holding anything but plain JSON values is a ContractError naming where", () => {
  class Schema {
    type = "string";
  }
  const cases = [
    [new Map([["type", "string"]]), "", /a Map is not a plain object or array/],
    [new Set(), "", /a Set is not a plain object or array/],
    [{ properties: { when: { const: new Date(0) } } }, "/properties/when/const", /a Date is not a plain object/],
    [{ properties: { a: { pattern: /x/ } } }, "/properties/a/pattern", /a RegExp is not/],
    [{ anyOf: [new Schema()] }, "/anyOf/0", /a Schema is not/],
    [{ const: new String("x") }, "/const", /a String is not/],
    [{ const: Object(1) }, "/const", /a Number is not/],
    [{ const: new Uint8Array([1]) }, "/const", /a Uint8Array is not/],
    [{ "a/b": { toJSON: () => ({}) } }, "/a~1b", /toJSON method/],
    [{ minimum: NaN }, "/minimum", /NaN is not a JSON number/],
    [{ maximum: -Infinity }, "/maximum", /-Infinity is not a JSON number/],
    [{ enum: [1, undefined] }, "/enum/1", /undefined/],
    // eslint-disable-next-line no-sparse-arrays
    [{ enum: [1, , 2] }, "/enum/1", /a hole/],
    [{ const: () => 1 }, "/const", /a function is not a JSON value/],
    [{ const: Symbol("s") }, "/const", /a symbol is not a JSON value/],
    [{ const: 1n }, "/const", /a bigint is not a JSON value/],
  ];
  for (const [document, location, message] of cases) {
    assert.throws(
      () => new Contract(document),
      (e) => e instanceof ContractError && e.mistakes.length === 1 && e.mistakes[0].kind === "not_json" && e.mistakes[0].location === location && message.test(e.message),
      `${String(message)} at ${location}`,
    );
  }
  // A cycle, a getter that throws, a revoked proxy: refused, never a crash.
  const cyclic = { type: "object" };
  cyclic.properties = { self: cyclic };
  assert.throws(() => new Contract(cyclic), (e) => e instanceof ContractError && e.mistakes[0].location === "/properties/self" && /cycle/.test(e.message));
  assert.throws(() => new Contract({ get type() { throw new Error("boom"); } }), (e) => e instanceof ContractError && /boom/.test(e.message));
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  assert.throws(() => new Contract({ items: proxy }), ContractError);
  // What JSON has is kept as it is: a shared (not cyclic) node, a null-prototype
  // object, an own "__proto__" key, a member left undefined (an optional field).
  const shared = { type: "integer" };
  const bare = Object.assign(Object.create(null), { type: "object" });
  const c = new Contract({ type: "array", prefixItems: [shared, shared, bare], minimum: undefined });
  assert.equal(c.document, '{"type":"array","prefixItems":[{"type":"integer"},{"type":"integer"},{"type":"object"}]}');
  const proto = new Contract(JSON.parse('{"type": "object", "properties": {"__proto__": {"type": "string"}}}'));
  assert.equal(proto.document, '{"type":"object","properties":{"__proto__":{"type":"string"}}}');
  assert.equal(new Contract(true).check("1").passed, true);
});

test("a contract string holding a lone surrogate is a ContractError, as the object form's", () => {
  for (const [text, unit] of [['{"enum": ["\ud800"]}', "D800"], ['{"enum": ["a\udc00"]}', "DC00"]]) {
    assert.throws(
      () => new Contract(text),
      (e) => e instanceof ContractError && e.mistakes[0].kind === "not_json" && e.message.includes(`lone surrogate (U+${unit}`),
    );
    assert.throws(() => new Contract(JSON.parse(text)), (e) => e instanceof ContractError && /lone surrogate/.test(e.message));
  }
  // A pair is a character.
  assert.equal(new Contract('{"enum": ["\ud83d\ude00"]}').check('"😀"').passed, true);
});

test("a surrogate pair split across two string pieces is read as check reads it", () => {
  const c = new Contract({ enum: ["\uFFFD\uFFFD"] });
  const s = c.stream();
  assert.equal(s.feed('"\ud83d'), "pending");
  s.feed('\ude00"');
  const v = s.finish();
  assert.equal(v.passed, false);
  assert.equal(v.toJSON(), c.check('"😀"').toJSON());
  // A lone high surrogate, held to the end or followed by bytes, is refused where it
  // stands, as check refuses it (never U+FFFD, which this contract would accept).
  const lone = new Contract({ enum: ["\uFFFD"] });
  const notJsonAt = (v, offset) => v.problems[0].code === "not_json" && v.problems[0].position?.offset === offset;
  assert.ok(notJsonAt(lone.check('"\ud83d"'), 1));
  const held = lone.stream();
  held.feed('"');
  held.feed("\ud83d");
  const heldVerdict = held.finish();
  assert.ok(notJsonAt(heldVerdict, 1), heldVerdict.toJSON());
  const ends = lone.stream();
  ends.feed('"\ud83d');
  ends.feed(Buffer.from('"'));
  assert.equal(ends.finish().toJSON(), lone.check('"\ud83d"').toJSON());
  const pieces = lone.stream();
  pieces.feed('"');
  pieces.feed("\ud83d");
  pieces.feed('"');
  assert.equal(pieces.finish().toJSON(), lone.check('"\ud83d"').toJSON());
});

test('objects built from JSON keep a "__proto__" key an own property: schema, partial, repairs, rounds', async () => {
  const isOwn = (o, what) => {
    assert.ok(Object.hasOwn(o, "__proto__"), `${what}: no own __proto__`);
    assert.equal(Object.getPrototypeOf(o), Object.prototype, `${what}: prototype replaced`);
  };
  const typed = new Contract('{"type": "object", "properties": {"__proto__": {"type": "string"}}}');
  for (const provider of ["json-schema", "anthropic"]) isOwn(typed.schema(provider).properties, provider);

  const hazardous = new Contract({ type: "object", "x-vouch": { allow: ["hazardous_keys"] } });
  const s = hazardous.stream();
  s.feed('{"b": {"__proto__": {"polluted": 1}}}');
  isOwn(s.partial.b, "partial");
  assert.equal(s.partial.b.polluted, undefined);

  const defaulted = new Contract(
    '{"type": "object", "properties": {"d": {"type": "object", "x-vouch": {"default": {"__proto__": {"polluted": 1}}}}}, "x-vouch": {"allow": ["hazardous_keys"]}}',
  );
  const live = defaulted.stream();
  live.feed("{}");
  const finished = live.finish();
  isOwn(finished.repairs[0].after, "a stream's repair");
  assert.deepEqual(JSON.parse(finished.toJSON()).repairs, finished.repairs);
  const asked = await rounds(defaulted, () => "{}");
  isOwn(asked.rounds[0].repairs[0].after, "a round's repair");
  isOwn(asked.value.d, "a round's value");
});

test("a contract allowing big_integers never hands over an integer a number would round", async () => {
  const big = new Contract({ type: "integer", not: { const: 9007199254740992 }, "x-vouch": { allow: ["big_integers"] } });
  const v = big.check("9007199254740993");
  assert.equal(v.passed, true);
  assert.equal(v.json, "9007199254740993");
  const rounded = (path) => (e) =>
    e instanceof TypeError && e.message.includes(`the integer at ${path} (`) && /beyond JavaScript's exact range/.test(e.message) && /BigInt-aware/.test(e.message);
  assert.throws(() => v.value, rounded("(root)"));
  assert.throws(() => big.parse("9007199254740993"), rounded("(root)"));
  assert.throws(() => big.parse(Buffer.from("9007199254740993")), rounded("(root)"));
  // Exact ones are handed over: within the range, or a double holds them.
  assert.equal(big.parse("9007199254740991"), 9007199254740991);
  assert.equal(big.parse("-9007199254740994"), -9007199254740994);

  const nested = new Contract({
    type: "object",
    properties: { list: { type: "array", items: { type: "integer" } }, name: { type: "string" } },
    "x-vouch": { allow: ["big_integers"] },
  });
  const reply = '{"name": "12345678901234567890 [,{", "a/b": 0, "list": [1, 18446744073709551615]}';
  assert.throws(() => nested.check(reply).value, rounded("/list/1"));
  assert.throws(() => nested.parse(reply.replace('"a/b": 0', '"a/b": 18446744073709551615')), rounded("/a~1b"));
  const [many] = await nested.checkMany([reply]);
  assert.throws(() => many.value, rounded("/list/1"));
  const s = nested.stream();
  s.feed(reply);
  assert.throws(() => s.finish().value, rounded("/list/1"));
  const asked = await rounds(nested, () => reply);
  assert.equal(asked.outcome, "accepted");
  assert.throws(() => asked.value, rounded("/list/1"));
  // A string of digits is not a number.
  assert.deepEqual(nested.parse('{"name": "18446744073709551615"}'), { name: "18446744073709551615" });
  // A contract without big_integers refuses such an integer outright.
  assert.equal(new Contract({ type: "integer" }).check("9007199254740993").accepted, false);
});

test("fromZod refuses a regex without the u flag whose meaning differs under Unicode semantics", () => {
  for (const [re, construct] of [
    [/^.$/, "the wildcard ."],
    [/^[^a]$/, "a negated class"],
    [/^\S$/, "\\S"],
    [/^[\s\S]$/, "\\S"],
    [/^\D$/, "\\D"],
    [/^\W$/, "\\W"],
    [/^a\B$/, "\\B"],
    [/^\p{L}$/, "\\p"],
    [/^\P{L}$/, "\\P"],
    [/^\u{61}$/, "\\u{…}"],
    [/^😀+$/, "the character 😀 (outside the BMP)"],
    [/^[\uD83D\uDE00]$/, "\\uD83D (a surrogate)"],
  ]) {
    assert.throws(
      () => Contract.fromZod(z.object({ code: z.string().regex(re) })),
      (e) =>
        e instanceof ContractError &&
        e.mistakes[0].kind === "unexportable" &&
        e.mistakes[0].keyword === "pattern" &&
        e.mistakes[0].location === "/code" &&
        e.message.includes(`the regex ${String(re)} has no u flag and holds ${construct}`),
      String(re),
    );
  }
  // With u (or v) Zod and vouch agree; without a construct that differs, nothing changes.
  const emoji = JSON.stringify({ code: "😀" });
  assert.equal(Contract.fromZod(z.object({ code: z.string().regex(/^.$/u) })).check(emoji).passed, true);
  assert.equal(Contract.fromZod(z.object({ code: z.string().regex(/^\p{L}$/u) })).check('{"code": "é"}').passed, true);
  assert.equal(Contract.fromZod(z.object({ code: z.string().regex(/^[a-z]+\d*$/) })).check('{"code": "ab1"}').passed, true);
  assert.equal(Contract.fromZod(z.object({ code: z.string().regex(/^[.]$/) })).check('{"code": "."}').passed, true);
  // Zod's own formats and literal checks are not the caller's regex.
  Contract.fromZod(z.object({ host: z.hostname(), low: z.string().lowercase(), pre: z.string().startsWith("😀") }));
});

test("fromZod refuses a regex flag its JSON Schema drops, and the caller's pattern in a built-in format", () => {
  for (const [re, flag] of [[/^b/y, "y (sticky"], [/b/gy, "y (sticky"], [/b/dy, "y (sticky"]]) {
    assert.throws(
      () => Contract.fromZod(z.object({ code: z.string().regex(re) })),
      (e) => e instanceof ContractError && e.mistakes[0].keyword === "pattern" && e.mistakes[0].location === "/code" && e.message.includes(`the regex ${String(re)} has the flag ${flag}`),
      String(re),
    );
  }
  // A sticky regex is a fail-open without this: JSON Schema's pattern matches anywhere.
  assert.equal(z.string().regex(/b/y).safeParse("abc").success, false);
  // The caller's pattern in a built-in format is read as a .regex() is; Zod's default is not.
  for (const schema of [z.email({ pattern: /^.@x\.co$/ }), z.string().email({ pattern: /x@y\.co/y }), z.stringFormat("one", /^[^x]$/)]) {
    assert.throws(() => Contract.fromZod(schema), (e) => e instanceof ContractError && e.mistakes[0].keyword === "pattern", String(schema._zod.def.pattern ?? schema._zod.def.checks));
  }
  Contract.fromZod(z.object({ a: z.email(), b: z.email({ pattern: z.regexes.html5Email }), c: z.iso.datetime(), d: z.uuidv4(), e: z.hash("sha256"), f: z.hex() }));
});

test("fromZod refuses what z.url() checks beyond format uri: hostname, protocol (z.httpUrl()), normalize", () => {
  for (const [schema, says] of [
    [z.object({ link: z.httpUrl() }), "the URL's protocol and hostname check"],
    [z.object({ link: z.url({ hostname: /^x\.com$/ }) }), "the URL's hostname check"],
    [z.object({ link: z.string().url({ protocol: /^https$/ }) }), "the URL's protocol check"],
    [z.object({ link: z.url({ normalize: true }) }), "z.url({ normalize: true }) changes the value"],
  ]) {
    // Zod refuses what format uri alone would let through: vouch must not take it.
    assert.throws(() => Contract.fromZod(schema), (e) => e instanceof ContractError && e.mistakes[0].location === "/link" && e.message.includes(says), says);
  }
  assert.equal(z.httpUrl().safeParse("javascript:alert(1)").success, false);
  assert.equal(Contract.fromZod(z.url()).check('"https://x.com/a"').accepted, true);
});

test("fromZod refuses what Zod checks beyond its schema: z.jwt({ alg }), template literals, number keys, catchall, inherited names, v, function formats", () => {
  for (const [schema, keyword, location, says] of [
    [z.object({ token: z.jwt({ alg: "HS256" }) }), "jwt", "/token", "z.jwt({ alg }) checks the token's algorithm"],
    [z.object({ id: z.templateLiteral(["a", z.string().max(2)]) }), "pattern", "/id", "the template literal's pattern"],
    [z.object({ id: z.templateLiteral([z.string().regex(/^x.$/)]) }), "pattern", "/id", "the template literal's pattern"],
    [z.object({ byId: z.record(z.int(), z.string()) }), "propertyNames", "/byId", "the record's keys are numbers"],
    [z.record(z.number().min(5), z.string()), "propertyNames", "", "the record's keys are numbers"],
    // A second sweep, through fromZod itself (2,754 schemas, 506,046 replies):
    [z.record(z.number(), z.string()), "propertyNames", "", "a key of 309 digits"],
    [z.record(z.int().optional(), z.string()), "propertyNames", "", "the record's keys are numbers"],
    [z.object({}).catchall(z.string().refine((s) => s.length > 3)), "refine", "/*", "has no JSON Schema"],
    [z.object({ toString: z.string().optional(), a: z.number() }), "optional", "/toString", "named after a member every object inherits"],
    [z.object({ code: z.string().regex(/^[\w&&\d]$/v) }), "pattern", "/code", "has the v flag"],
    [z.object({ mail: z.stringFormat("email", (s) => s.endsWith("@corp.com")) }), "refine", "/mail", 'z.stringFormat("email", fn)'],
    [z.array(z.number()).check(z.property("length", z.number().min(2))), "refine", "", 'z.property("length"'],
  ]) {
    assert.throws(
      () => Contract.fromZod(schema),
      (e) => e instanceof ContractError && e.mistakes.some((m) => m.keyword === keyword && m.location === location) && e.message.includes(says),
      says,
    );
  }
  // What each would let through, by Zod's own verdict.
  const token = "eyJhbGciOiJub25lIn0.e30.sig"; // alg "none"
  assert.equal(z.jwt({ alg: "HS256" }).safeParse(token).success, false);
  assert.equal(z.jwt().safeParse(token).success, true);
  assert.equal(z.templateLiteral(["a", z.string().max(2)]).safeParse("a😀😀").success, false);
  assert.equal(z.record(z.int(), z.string()).safeParse({ 9007199254740993: "a" }).success, false);
  assert.equal(z.record(z.number(), z.string()).safeParse(JSON.parse(`{"${"9".repeat(309)}": "a"}`)).success, false);
  assert.equal(z.object({}).catchall(z.string().refine((s) => s.length > 3)).safeParse({ k: "x" }).success, false);
  assert.equal(z.object({ toString: z.string().optional(), a: z.number() }).safeParse({ a: 1 }).success, false);
  assert.equal(z.string().regex(/^[\w&&\d]$/v).safeParse("a").success, false);
  assert.equal(z.stringFormat("email", (s) => s.endsWith("@corp.com")).safeParse("a@b.co").success, false);
  assert.equal(z.array(z.number()).check(z.property("length", z.number().min(2))).safeParse([1]).success, false);
  // Kept: what means the same to Zod and vouch.
  assert.equal(Contract.fromZod(z.templateLiteral(["user_", z.string()])).check('"user_😀"').accepted, true);
  assert.equal(Contract.fromZod(z.templateLiteral(["n", z.number()])).check('"n-1.5"').accepted, true);
  assert.equal(Contract.fromZod(z.object({ toString: z.string(), a: z.number() })).check('{"toString": "x", "a": 1}').accepted, true);
  assert.equal(Contract.fromZod(z.jwt()).check(JSON.stringify(token)).accepted, true);
});

test("fromZod against Zod over its string formats and checks: vouch never takes what Zod refuses", () => {
  const schemas = {
    url: z.url(), httpUrl: z.httpUrl(), sticky: z.string().regex(/b/y), global: z.string().regex(/b/g), ignoreCase: z.string().regex(/^abc$/i), multiline: z.string().regex(/^b$/m), email: z.email(), emailHtml5: z.email({ pattern: z.regexes.html5Email }), uuid: z.uuid(), uuidv4: z.uuidv4(), uuidv7: z.uuidv7(), guid: z.guid(),
    cuid: z.cuid(), cuid2: z.cuid2(), ulid: z.ulid(), xid: z.xid(), ksuid: z.ksuid(), nanoid: z.nanoid(), ipv4: z.ipv4(), ipv6: z.ipv6(), cidrv4: z.cidrv4(), cidrv6: z.cidrv6(),
    mac: z.mac(), base64: z.base64(), base64url: z.base64url(), e164: z.e164(), jwt: z.jwt(), date: z.iso.date(), datetime: z.iso.datetime(), datetimeOffset: z.iso.datetime({ offset: true }),
    datetimeLocal: z.iso.datetime({ local: true }), time: z.iso.time(), hostname: z.hostname(), hex: z.hex(), sha256: z.hash("sha256"), lower: z.string().lowercase(), upper: z.string().uppercase(),
    includes: z.string().includes("b"), startsWith: z.string().startsWith("a"), endsWith: z.string().endsWith("c"), length: z.string().length(2), max: z.string().max(1), regexU: z.string().regex(/^.$/u),
    int: z.int(), int32: z.int32(), uint32: z.uint32(), float32: z.float32(), float64: z.float64(), safe: z.number().safe(), gt: z.number().gt(1), step: z.number().step(0.1), multipleOf: z.number().multipleOf(3), positive: z.number().positive(),
  };
  const values = ["", "a", "abc", "ABC", "😀", "a😀", "é", "e\u0301", "x.com", "https://x.com", "HTTP://X.COM/a", "ftp://x.com", "mailto:a@b.co", "javascript:alert(1)", "a@b.co", "😀@b.co",
    "123e4567-e89b-42d3-a456-426614174000", "00000000-0000-0000-0000-000000000000", "2023-02-28", "2023-02-30", "2023-02-28T10:00:00Z", "2023-02-28T10:00:00+01:00", "2023-02-28T10:00:00", "10:00", "10:00:00.5",
    "http://x.com:99999/", "http:", "http://", "http://a.123/", "http://999.999.999.999/", "http://[v1.x]/", "http://xn--a/", "http://%00/",
    "127.0.0.1", "256.1.1.1", "::1", "1::2::3", "10.0.0.0/8", "::/129", "aGVsbG8=", "aGVsbG8", "+14155552671", "eyJhbGciOiJIUzI1NiJ9.e30.sig", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "00:1A:2B:3C:4D:5E", "deadbeef", "-bad-.com",
    0, 1, -1, 1.5, 0.3, 3, 2 ** 31, -(2 ** 31) - 1, 2 ** 32, 2 ** 53, 1e308, 3.5e38, true, null, [], {}];
  let checked = 0;
  for (const [name, schema] of Object.entries(schemas)) {
    let contract;
    try {
      contract = Contract.fromZod(schema);
    } catch (e) {
      assert.ok(e instanceof ContractError, `${name}: ${e}`); // refused with its reason: never a fail-open
      continue;
    }
    for (const v of values) {
      const raw = JSON.stringify(v);
      const verdict = contract.check(raw);
      if (verdict.accepted) {
        const zod = schema.safeParse(JSON.parse(raw));
        assert.ok(zod.success, `${name}: vouch accepted ${raw}, which Zod refuses (a fail-open)`);
        assert.deepEqual(verdict.value, zod.data, `${name}: ${raw}`);
      }
      checked++;
    }
  }
  assert.ok(checked > 2000, `${checked} pairs`);
});

test("rounds' maxRounds is a whole number from 1 to 100, else an error naming it", async () => {
  const c = new Contract({ type: "boolean" });
  for (const n of [-1, 0, 101, 2 ** 32 + 1, 1.5, NaN, Infinity]) {
    await assert.rejects(rounds(c, () => "true", { maxRounds: n }), (e) => e instanceof RangeError && e.message === `maxRounds must be a whole number from 1 to 100 (got ${n})`);
  }
  await assert.rejects(rounds(c, () => "true", { maxRounds: "2" }), (e) => e instanceof TypeError && e.message === 'maxRounds must be a whole number from 1 to 100 (got "2", a string)');
  await assert.rejects(rounds(c, () => "true", { maxRounds: null }), (e) => e instanceof TypeError && e.message === "maxRounds must be a whole number from 1 to 100 (got null)");
  let calls = 0;
  const out = await rounds(c, () => (++calls, "nope"), { maxRounds: 100 });
  assert.equal(out.rounds.length, 100);
  assert.equal(calls, 100);
  assert.equal((await rounds(c, () => "true", { maxRounds: 1 })).passed, true);
});

test("a string over max_bytes is refused from its start: check's verdict, the rest never copied", async () => {
  const limit = 1000;
  const c = new Contract({
    type: "object",
    properties: { a: { type: "boolean" }, s: { type: "string" } },
    "x-vouch": { limits: { max_bytes: limit } },
  });
  const pair = "\u{1D11E}"; // two UTF-16 units, four bytes of UTF-8
  const fill = (head, unit, units) => head + unit.repeat(Math.ceil((units - head.length) / unit.length)) + '"}';
  const replies = [
    fill('{"s": "', "x", 40000),
    fill('{"a": "no", "s": "', "x", 40000), // a problem within the limit, reported before too_large
    fill('{"s": "', "é≥", 40000),
    // A pair cut by the copy (its high half the last unit kept), and pairs throughout.
    '{"s": "' + "x".repeat(limit + 1 - 7) + pair.repeat(20000) + '"}',
    fill('{"s": "\uD800 ', "x", 40000), // a lone surrogate: not UTF-8, refused where it stands
    fill('{"s": "', "x\uDC00", 40000),
  ];
  for (const reply of replies) {
    // The bytes the string stands for, checked in place by the core: the verdict to equal.
    const expected = c.check(checkedBytes(reply)).toJSON();
    assert.match(expected, /"code":"(too_large|not_json)"/);
    assert.equal(c.check(reply).toJSON(), expected, reply.slice(0, 24));
    const [many] = await c.checkMany([reply]);
    assert.equal(many.toJSON(), expected, reply.slice(0, 24));
    // The whole verdict, looked up again from the string (the re-ask message).
    assert.equal(c.check(reply).reask(), c.check(checkedBytes(reply)).reask(), reply.slice(0, 24));
    // A stream fed the string as one piece, and as a small piece then the rest.
    const whole = c.stream();
    assert.equal(whole.feed(reply), "refused");
    assert.equal(whole.received, Buffer.byteLength(reply));
    assert.equal(whole.finish().toJSON(), expected, reply.slice(0, 24));
    const split = c.stream();
    split.feed(reply.slice(0, 5));
    split.feed(reply.slice(5));
    assert.equal(split.finish().toJSON(), expected, reply.slice(0, 24));
  }
  const within = fill('{"a": "no", "s": "', "x", 40000);
  assert.deepEqual(
    c.check(within).problems.map((p) => [p.code, p.path]),
    [["wrong_type", "/a"], ["too_large", ""]],
  );

  // A reply of 64 M characters (128 MB of UTF-8) against a limit of 64 KiB, in a process
  // of its own for each call (`big_reply_child.mjs`: a peak is never lowered): refused
  // with its exact size, and the call copies no more of it than the check reads (the
  // peak rose by under 1 MB). Before, `reask` (the whole verdict, looked up again from
  // the string), a stream's `feed` and a round's reply read it whole: the peak rose by
  // 256, 128 and 128 MB.
  for (const op of ["check", "checkMany", "reask", "stream", "rounds"]) {
    const out = spawnSync(process.execPath, [BIG_CHILD, op, "64"], { encoding: "utf8", maxBuffer: 2 ** 24 });
    assert.equal(out.status, 0, out.stderr);
    const { grew, size, answer } = JSON.parse(out.stdout);
    assert.match(answer, new RegExp(`${size} bytes`), op);
    assert.ok(grew < 16, `${op}: the peak rose by ${grew.toFixed(0)} MB`);
  }
});
