// The Zod models every JavaScript source is generated from, with valid replies.
// Written once for Zod 3 and Zod 4: `models(z, major)` builds them with the Zod
// it is given; where the two differ, Zod 4's own spelling is used under 4.
// `vouch(policy)` is how each version carries `x-vouch` (see docs/sources.md):
// Zod 4 `.meta({"x-vouch": ...})`, Zod 3 a JSON `.describe()` that
// zod-to-json-schema's `jsonDescription` post-processor merges into the schema.

export function models(z, major) {
  const v4 = major === 4;
  const vouch = (schema, policy) =>
    v4 ? schema.meta({ "x-vouch": policy }) : schema.describe(JSON.stringify({ "x-vouch": policy }));
  const int = () => (v4 ? z.int() : z.number().int());
  const datetime = () => (v4 ? z.iso.datetime() : z.string().datetime());
  const date = () => (v4 ? z.iso.date() : z.string().date());
  const time = () => (v4 ? z.iso.time() : z.string().time());
  const duration = () => (v4 ? z.iso.duration() : z.string().duration());
  const uuid = () => (v4 ? z.uuid() : z.string().uuid());
  const email = () => (v4 ? z.email() : z.string().email());
  const url = () => (v4 ? z.url() : z.string().url());
  const cuid = () => (v4 ? z.cuid() : z.string().cuid());
  const record = (value) => z.record(z.string(), value);

  const Address = z.object({ street: z.string(), city: z.string(), postcode: z.string() });
  const ADDR = { street: "1 Main St", city: "Springfield", postcode: "12345" };
  const Person = z.object({ name: z.string(), address: Address, previous: z.array(Address).optional() });
  const Cat = z.object({ kind: z.literal("cat"), lives: int() });
  const Dog = z.object({ kind: z.literal("dog"), good: z.boolean() });

  const TreeNode = z.lazy(() => z.object({ label: z.string(), children: z.array(TreeNode) }));
  const LinkedNode = z.lazy(() => z.object({ value: int(), next: LinkedNode.nullable() }));

  const Color = v4 ? z.enum({ Red: "red", Green: "green", Blue: "blue" }) : z.nativeEnum({ Red: "red", Green: "green", Blue: "blue" });

  return [
    ["Plate", z.object({
      productPresent: vouch(z.boolean(), { findings: [{ when: { const: true }, message: "a product is still in frame" }] }),
      productTextPresent: z.boolean(),
      garbledText: z.boolean(),
    }).strict(), [
      { productPresent: false, productTextPresent: false, garbledText: false },
      { productPresent: true, productTextPresent: true, garbledText: false },
    ]],
    ["Optionals", z.object({ name: z.string(), nickname: z.string().optional(), age: int().nullish() }), [
      { name: "Ada" },
      { name: "Ada", nickname: "ada", age: 36 },
      { name: "Ada", age: null },
    ]],
    ["NullableRequired", z.object({ value: int().nullable(), note: z.string().nullable() }), [
      { value: 1, note: "x" },
      { value: null, note: null },
    ]],
    ["Person", Person, [
      { name: "Bob", address: ADDR },
      { name: "Bob", address: ADDR, previous: [ADDR, ADDR] },
    ]],
    ["Lists", z.object({ tags: z.array(z.string()), scores: z.array(z.number()).min(1).max(5), matrix: z.array(z.array(int())) }), [
      { tags: [], scores: [0.5], matrix: [] },
      { tags: ["a", "b"], scores: [1, 2.5, 3], matrix: [[1, 2], [3]] },
    ]],
    ["Enums", z.object({ color: Color, size: z.enum(["s", "m", "l"]) }), [
      { color: "red", size: "s" },
      { color: "blue", size: "l" },
    ]],
    ["Literals", z.object({ status: z.union([z.literal("ok"), z.literal("error")]), version: z.literal(2), flag: z.literal(true) }), [
      { status: "ok", version: 2, flag: true },
      { status: "error", version: 2, flag: true },
    ]],
    ["Pet", z.object({ pet: z.discriminatedUnion("kind", [Cat, Dog]) }), [
      { pet: { kind: "cat", lives: 9 } },
      { pet: { kind: "dog", good: true } },
    ]],
    ["PlainUnion", z.object({ value: z.union([int(), z.string()]), either: z.union([Cat, Dog]) }), [
      { value: 3, either: { kind: "cat", lives: 1 } },
      { value: "three", either: { kind: "dog", good: false } },
    ]],
    ["Maps", z.object({ counts: record(int()) }), [
      { counts: {} },
      { counts: { a: 1, b: 2 } },
    ]],
    ["MapOfModels", z.object({ addresses: record(Address) }), [
      { addresses: { home: ADDR } },
      { addresses: {} },
    ]],
    ["Tuples", z.object({ point: z.tuple([int(), int()]), row: z.tuple([int(), z.string(), z.boolean()]) }), [
      { point: [1, 2], row: [1, "a", true] },
      { point: [0, -5], row: [7, "", false] },
    ]],
    ["VariadicTuple", z.object({ head: z.tuple([z.string()]).rest(int()) }), [
      { head: ["a"] },
      { head: ["a", 1, 2] },
    ]],
    ["TreeNode", z.object({ tree: TreeNode }), [
      { tree: { label: "root", children: [] } },
      { tree: { label: "root", children: [{ label: "a", children: [{ label: "b", children: [] }] }, { label: "c", children: [] }] } },
    ]],
    ["LinkedNode", z.object({ list: LinkedNode }), [
      { list: { value: 1, next: null } },
      { list: { value: 1, next: { value: 2, next: { value: 3, next: null } } } },
    ]],
    ["Numbers", z.object({
      percent: int().min(0).max(100),
      ratio: z.number().gt(0).lt(1),
      step: int().multipleOf(5),
      price: z.number().nonnegative().multipleOf(0.01),
    }), [
      { percent: 0, ratio: 0.5, step: 10, price: 9.99 },
      { percent: 100, ratio: 0.001, step: -5, price: 0 },
    ]],
    ["Strings", z.object({
      code: z.string().min(3).max(8).regex(/^[A-Z]+$/),
      comment: z.string().max(200),
      slug: z.string().regex(/^[a-z0-9-]+$/),
    }), [
      { code: "ABC", comment: "", slug: "a-1" },
      { code: "ABCDEFGH", comment: "fine", slug: "x" },
    ]],
    ["StringChecks", z.object({
      ref: z.string().startsWith("ref_"),
      note: z.string().includes("@"),
      tail: z.string().endsWith(".json"),
      exact: z.string().length(4),
    }), [
      { ref: "ref_1", note: "a@b", tail: "x.json", exact: "abcd" },
    ]],
    ["Defaults", z.object({
      title: z.string().default("untitled"),
      count: int().default(0),
      enabled: z.boolean().default(true),
      tags: z.array(z.string()).default([]),
    }), [
      {},
      { title: "t", count: 3, enabled: false, tags: ["x"] },
    ]],
    ["Dates", z.object({ day: date(), at: datetime(), wait: duration() }), [
      { day: "2024-02-29", at: "2024-02-29T12:30:00Z", wait: "PT1H" },
      { day: "1999-12-31", at: "1999-12-31T23:59:59.250Z", wait: "P1DT2H" },
    ]],
    // A time of day without an offset (Zod has no offset for times).
    ["LocalTime", z.object({ clock: time() }), [
      { clock: "12:30:00" },
      { clock: "00:00:00.5" },
    ]],
    ["Ids", z.object({ id: uuid(), parent: uuid().optional(), cuid: cuid() }), [
      { id: "123e4567-e89b-12d3-a456-426614174000", cuid: "cjld2cjxh0000qzrmn831i7rn" },
      { id: "123e4567-e89b-12d3-a456-426614174000", parent: "00000000-0000-4000-8000-000000000000", cuid: "ckx5f8h3z0000qzrmn831i7rn" },
    ]],
    ["Money", z.object({ amount: z.string().regex(/^-?\d+(\.\d+)?$/), cents: int().nonnegative() }), [
      { amount: "12.50", cents: 1250 },
      { amount: "-3", cents: 0 },
    ]],
    ["BigInt", z.object({ big: z.coerce.bigint() }), [
      { big: 5 },
      { big: "9007199254740993" },
    ]],
    ["Contacts", z.object({ email: email(), homepage: url() }), [
      { email: "ada@example.com", homepage: "https://example.com/" },
    ]],
    ["Policy", vouch(z.object({
      verdict: vouch(z.enum(["eligible", "maybe", "not_eligible"]), { findings: [{ when: { const: "not_eligible" }, message: "not eligible" }] }),
      score: vouch(int().min(0).max(100), { repair: ["coerce", "round", "clamp", "default_if_invalid"], default: 0 }),
      summary: vouch(z.string().min(1), { repair: ["trim"] }),
    }), { unwrap: ["fence", "prose"] }), [
      { verdict: "eligible", score: 80, summary: "ok" },
      { verdict: "not_eligible", score: 0, summary: "no" },
    ]],
    ["Sets", z.object({ labels: z.array(z.string()).nonempty() }), [
      { labels: ["a"] },
      { labels: ["a", "b"] },
    ]],
    ["Invoice", z.object({
      number: z.string(),
      issued: date(),
      currency: z.enum(["EUR", "USD", "GBP"]),
      items: z.array(z.object({ sku: z.string().regex(/^[A-Z]{3}-\d{4}$/), quantity: int().min(1), unit_price: z.number().min(0) })).min(1),
      customer: Person,
      notes: z.string().nullable(),
    }), [
      { number: "INV-1", issued: "2024-01-31", currency: "EUR", items: [{ sku: "ABC-1234", quantity: 2, unit_price: 9.5 }], customer: { name: "Bob", address: ADDR }, notes: null },
      { number: "INV-2", issued: "2024-02-01", currency: "USD", items: [{ sku: "XYZ-0001", quantity: 1, unit_price: 0 }, { sku: "XYZ-0002", quantity: 10, unit_price: 1.25 }], customer: { name: "Eve", address: ADDR, previous: [] }, notes: "paid" },
    ]],
    ["MathReasoning", z.object({ steps: z.array(z.object({ explanation: z.string(), output: z.string() })), final_answer: z.string() }), [
      { steps: [{ explanation: "8x = -30", output: "x = -3.75" }], final_answer: "x = -3.75" },
      { steps: [], final_answer: "none" },
    ]],
    ["Strict", z.object({ a: int(), b: z.string().optional() }).strict(), [
      { a: 1 },
      { a: 1, b: "x" },
    ]],
    ["Passthrough", z.object({ a: int() }).passthrough(), [
      { a: 1 },
      { a: 1, other: "kept" },
    ]],
    ["Drawing", z.object({
      shapes: z.array(z.discriminatedUnion("kind", [Cat, Dog])),
      layers: record(z.array(z.object({ kind: z.enum(["circle", "square"]), size: z.number().positive() }))),
    }), [
      { shapes: [{ kind: "cat", lives: 3 }, { kind: "dog", good: true }], layers: { bg: [{ kind: "circle", size: 1.5 }] } },
      { shapes: [], layers: {} },
    ]],
    // Shapes written for OpenAI's strict mode (nullable rather than optional, closed
    // objects): what openai-node's zodResponseFormat users write.
    ["NullableNested", z.object({ address: Address.nullable(), tags: z.array(z.string()).nullable() }), [
      { address: ADDR, tags: ["a"] },
      { address: null, tags: null },
    ]],
    ["Classification", z.object({
      label: z.enum(["spam", "ham", "unsure"]),
      confidence: z.number().min(0).max(1),
      reasons: z.array(z.string()),
    }), [
      { label: "spam", confidence: 0.9, reasons: ["link"] },
      { label: "unsure", confidence: 0, reasons: [] },
    ]],
    ["Sentiment", z.object({ sentiment: z.union([z.literal("positive"), z.literal("negative"), z.literal("neutral")]), score: z.number().nullable() }), [
      { sentiment: "positive", score: 0.8 },
      { sentiment: "neutral", score: null },
    ]],
    ["CalendarEvent", z.object({
      name: z.string(),
      date: date(),
      starts: datetime(),
      ends: datetime().nullable(),
      participants: z.array(email()),
    }), [
      { name: "Science fair", date: "2024-05-03", starts: "2024-05-03T09:00:00Z", ends: null, participants: ["alice@example.com", "bob@example.com"] },
    ]],
    ["Moderation", z.object({
      flagged: vouch(z.boolean(), { findings: [{ when: { const: true }, message: "the content is flagged" }] }),
      categories: z.array(z.enum(["violence", "hate", "self_harm", "sexual"])),
      explanation: vouch(z.string(), { repair: ["trim"] }),
    }), [
      { flagged: false, categories: [], explanation: "fine" },
      { flagged: true, categories: ["hate", "violence"], explanation: "slur" },
    ]],
    ["Entities", z.object({
      entities: z.array(z.object({ type: z.enum(["person", "org", "place"]), text: z.string().min(1), start: int().min(0) })),
    }), [
      { entities: [] },
      { entities: [{ type: "person", text: "Ada", start: 0 }, { type: "place", text: "London", start: 10 }] },
    ]],
    ["Deep", z.object({ a: z.object({ b: z.object({ c: z.object({ d: z.array(z.object({ e: z.boolean() })) }) }) }) }), [
      { a: { b: { c: { d: [] } } } },
      { a: { b: { c: { d: [{ e: true }, { e: false }] } } } },
    ]],
    ["UnionNullable", z.object({ value: z.union([z.string(), z.number()]).nullable(), kind: z.enum(["a", "b"]).nullable() }), [
      { value: "x", kind: "a" },
      { value: 1.5, kind: null },
      { value: null, kind: "b" },
    ]],
  ];
}
