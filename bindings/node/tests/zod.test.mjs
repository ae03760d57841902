// Zod 4 schemas as contracts. Zod is the independent oracle: whatever vouch accepts,
// Zod accepts too, with the same value (no fail-open against the user's own schema);
// where they differ, vouch refuses what Zod would let through, and the table below
// says why. A part of the schema JSON Schema cannot say is refused with its path.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as z from "zod";
import { Contract, ContractError } from "vouch";

/** Each Zod schema with replies both sides should agree on. */
const ROUND_TRIPS = {
  object: [
    z.object({ name: z.string().min(1), age: z.int().min(0).max(150), ok: z.boolean() }),
    ['{"name":"Ada","age":36,"ok":true}', '{"name":"","age":36,"ok":true}', '{"name":"Ada","age":36.5,"ok":true}', '{"name":"Ada","age":-1,"ok":true}', '{"name":"Ada","age":36}', '{"name":"Ada","age":36,"ok":"true"}', "[]", "null", '"x"'],
  ],
  nested: [
    z.object({ user: z.object({ id: z.string().uuid(), tags: z.array(z.string().max(5)).max(3) }) }),
    ['{"user":{"id":"123e4567-e89b-42d3-a456-426614174000","tags":["a","b"]}}', '{"user":{"id":"nope","tags":[]}}', '{"user":{"id":"123e4567-e89b-42d3-a456-426614174000","tags":["a","b","c","d"]}}', '{"user":{"id":"123e4567-e89b-42d3-a456-426614174000","tags":["toolong"]}}', '{"user":null}'],
  ],
  optionals: [
    z.object({ a: z.string().optional(), b: z.number().nullable(), c: z.string().nullish() }),
    ['{"b":1}', '{"a":"x","b":null}', '{"a":null,"b":1}', '{"b":1,"c":null}', "{}", '{"a":1,"b":1}'],
  ],
  enums: [
    z.object({ verdict: z.enum(["eligible", "maybe", "not_eligible"]), level: z.literal(3) }),
    ['{"verdict":"maybe","level":3}', '{"verdict":"likely","level":3}', '{"verdict":"maybe","level":4}', '{"verdict":"Maybe","level":3}'],
  ],
  unions: [
    z.object({ v: z.union([z.string().max(3), z.number().min(10)]) }),
    ['{"v":"abc"}', '{"v":"abcd"}', '{"v":12}', '{"v":5}', '{"v":true}', '{"v":null}'],
  ],
  discriminated_unions: [
    z.discriminatedUnion("kind", [z.object({ kind: z.literal("circle"), r: z.number().positive() }), z.object({ kind: z.literal("square"), side: z.number() })]),
    ['{"kind":"circle","r":2}', '{"kind":"circle","r":0}', '{"kind":"square","side":3}', '{"kind":"square","r":3}', '{"kind":"triangle","side":3}', '{"r":2}'],
  ],
  records: [
    z.record(z.string().regex(/^[a-z]+$/), z.number().int()),
    ['{"a":1,"bc":2}', '{"A":1}', '{"a":1.5}', "{}", '{"a":"1"}'],
  ],
  tuples: [
    z.tuple([z.string(), z.number(), z.boolean()]),
    ['["a",1,true]', '["a",1]', '["a",1,true,4]', '[1,"a",true]'],
  ],
  exported_refinements: [
    z.object({ email: z.email(), code: z.string().regex(/^[A-Z]{3}-\d{2}$/), n: z.number().multipleOf(0.5).lt(10).gte(0), s: z.string().startsWith("x").endsWith("y").length(4), list: z.array(z.string()).nonempty() }),
    ['{"email":"a@b.co","code":"ABC-12","n":9.5,"s":"xaby","list":["q"]}', '{"email":"nope","code":"ABC-12","n":9.5,"s":"xaby","list":["q"]}', '{"email":"a@b.co","code":"abc-12","n":9.5,"s":"xaby","list":["q"]}', '{"email":"a@b.co","code":"ABC-12","n":10,"s":"xaby","list":["q"]}', '{"email":"a@b.co","code":"ABC-12","n":0.3,"s":"xaby","list":["q"]}', '{"email":"a@b.co","code":"ABC-12","n":1,"s":"xabyy","list":["q"]}', '{"email":"a@b.co","code":"ABC-12","n":1,"s":"xaby","list":[]}'],
  ],
  defaults_are_required: [
    z.object({ lang: z.string().default("en") }),
    ['{"lang":"fr"}', "{}"],
  ],
  recursive: [
    (() => {
      const node = z.object({ name: z.string(), get children() { return z.array(node).max(3); } });
      return node;
    })(),
    ['{"name":"a","children":[{"name":"b","children":[]}]}', '{"name":"a","children":[{"name":1,"children":[]}]}', '{"name":"a"}'],
  ],
};

for (const [name, [schema, replies]] of Object.entries(ROUND_TRIPS)) {
  test(`Zod round trip: ${name}`, () => {
    const contract = Contract.fromZod(schema);
    let accepted = 0;
    let refused = 0;
    for (const raw of replies) {
      const verdict = contract.check(raw);
      const zod = schema.safeParse(JSON.parse(raw));
      if (verdict.accepted) {
        accepted++;
        assert.ok(zod.success, `vouch accepted what Zod refuses (a fail-open): ${raw}`);
        assert.deepEqual(verdict.value, zod.data, raw);
        assert.deepEqual(contract.parse(raw), zod.data, raw);
      } else {
        refused++;
        // Where Zod accepts what vouch refuses, it is a default made required (the
        // reply must be the output, no transform left to run): said in DIFFERENCES.
        if (zod.success) assert.equal(name, "defaults_are_required", `vouch refused what Zod accepts: ${raw}: ${verdict.toJSON()}`);
      }
    }
    assert.ok(accepted > 0 && refused > 0, `${name}: both sides of the contract are tried (${accepted} accepted, ${refused} refused)`);
  });
}

/** Where vouch refuses what Zod (through JSON.parse, the way users call it) lets
 * through, and why: each row must hold. */
const DIFFERENCES = [
  ["a repeated key (JSON.parse keeps the last)", z.object({ ok: z.boolean() }), '{"ok":false,"ok":true}', "duplicate_key"],
  ["an undeclared key (Zod strips it silently)", z.object({ ok: z.boolean() }), '{"ok":true,"admin":true}', "unexpected_property"],
  ["a number as a string (z.coerce turns \"80\" into 80)", z.object({ score: z.coerce.number() }), '{"score":"80"}', "wrong_type"],
  ["a missing defaulted field (Zod fills it in)", z.object({ lang: z.string().default("en") }), "{}", "missing"],
  ["an integer beyond 2^53 (JSON.parse rounds it)", z.object({ id: z.number() }), '{"id":12345678901234567890}', "imprecise_number"],
  ["a __proto__ key", z.record(z.string(), z.number()), '{"__proto__":1}', "unexpected_property"],
  ["a caught error (.catch hides a wrong type)", z.object({ n: z.number().catch(0) }), '{"n":"lots"}', "wrong_type"],
];

for (const [why, schema, raw, code] of DIFFERENCES) {
  test(`vouch refuses what Zod lets through: ${why}`, () => {
    assert.ok(schema.safeParse(JSON.parse(raw)).success, `Zod should accept ${raw}`);
    const verdict = Contract.fromZod(schema).check(raw);
    assert.equal(verdict.outcome, "refused", verdict.toJSON());
    assert.ok(verdict.problems.some((p) => p.code === code), `${code} in ${verdict.toJSON()}`);
  });
}

test("x-vouch rides on .meta(): a declared repair is made and logged", () => {
  const schema = z.object({ score: z.int().min(0).max(100).meta({ "x-vouch": { repair: ["coerce", "clamp"] } }) });
  const verdict = Contract.fromZod(schema).check('{"score": "142"}');
  assert.equal(verdict.outcome, "accepted", verdict.toJSON());
  assert.deepEqual(verdict.value, { score: 100 });
  assert.deepEqual(verdict.repairs.map((r) => r.rule), ["coerce", "clamp"]);
  assert.ok(schema.safeParse(verdict.value).success, "the repaired value is the Zod schema's");
});

/** What JSON Schema cannot say is refused with its path, never dropped. */
const UNSAID = [
  ["a refine", z.object({ a: z.string().refine((s) => s.length > 2, "too short") }), "refine", "/a"],
  ["a superRefine", z.object({ list: z.array(z.number().superRefine(() => {})) }), "refine", "/list/*"],
  ["a check with a function", z.object({ t: z.tuple([z.string(), z.string().check((ctx) => ctx)]) }), "refine", "/t/1"],
  ["a trim (an overwrite)", z.object({ name: z.string().trim() }), "overwrite", "/name"],
  ["a refine on the whole reply", z.object({ a: z.number(), b: z.number() }).refine((o) => o.a < o.b), "refine", ""],
  ["a refine inside an optional in a record", z.record(z.string(), z.string().refine(() => true).optional()), "refine", "/*"],
  ["a transform", z.object({ n: z.string().transform((s) => s.length) }), "", ""],
  ["a date", z.object({ when: z.date() }), "", ""],
];

for (const [what, schema, keyword, location] of UNSAID) {
  test(`refused with the reason: ${what}`, () => {
    let error;
    try {
      Contract.fromZod(schema);
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof ContractError, `${what} should not compile: ${error}`);
    assert.equal(error.mistakes[0].kind, "unexportable");
    assert.equal(error.mistakes[0].keyword, keyword);
    assert.equal(error.mistakes[0].location, location);
    assert.ok(error.message.includes("vouch would not check it") || error.message.includes("Zod cannot write"), error.message);
  });
}

test("not a Zod 4 schema: a ContractError that says what to pass", () => {
  assert.throws(() => Contract.fromZod({ type: "object" }), (e) => e instanceof ContractError && e.mistakes[0].kind === "not_zod" && /Zod 4/.test(e.message));
});
