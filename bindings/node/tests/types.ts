// Type-level tests, checked by `tsc --noEmit` (bindings/node/test): a contract from
// Zod carries the schema's inferred type, and a refused verdict has no value to read.
import * as z from "zod";
import { Contract, rounds, type Verdict } from "vouch";

type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
function expectType<T extends true>(_: T): void {}

const Plate = z.object({
  productPresent: z.boolean(),
  label: z.string().optional(),
  kind: z.discriminatedUnion("k", [z.object({ k: z.literal("a"), n: z.number() }), z.object({ k: z.literal("b") })]),
  tags: z.record(z.string(), z.tuple([z.string(), z.int()])),
  level: z.enum(["low", "high"]).nullable(),
});
const plate = Contract.fromZod(Plate);

const parsed = plate.parse("{}");
expectType<Equal<typeof parsed, z.infer<typeof Plate>>>(true);
expectType<Equal<typeof plate, Contract<z.infer<typeof Plate>>>>(true);

const verdict: Verdict<z.infer<typeof Plate>> = plate.check(Buffer.from("{}"));
if (verdict.passed) {
  const present: boolean = verdict.value.productPresent;
  void present;
}
if (verdict.accepted) {
  expectType<Equal<typeof verdict.value, z.infer<typeof Plate>>>(true);
} else {
  expectType<Equal<typeof verdict.value, undefined>>(true);
}
// @ts-expect-error: not narrowed, the value may be a refusal's (undefined)
void verdict.value.productPresent;

const untyped = new Contract({ type: "object" });
expectType<Equal<ReturnType<typeof untyped.parse>, unknown>>(true);
const many: Promise<Verdict<z.infer<typeof Plate>>[]> = plate.checkMany(["{}"]);
void many;
const outcome = rounds(plate, async () => "{}", { maxRounds: 2 });
void outcome.then((o) => {
  expectType<Equal<typeof o.value, z.infer<typeof Plate> | undefined>>(true);
});
