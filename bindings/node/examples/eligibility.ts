// The eligibility service's verdict, with its contract as a Zod 4 schema: the value
// is typed from the schema, every repair is logged, and a refusal is never shown.
import * as z from "zod";
import { Contract, VouchRefused } from "vouch";

const Eligibility = z.object({
  verdict: z.enum(["eligible", "maybe", "not_eligible"]),
  matchScore: z.int().min(0).max(100).meta({ "x-vouch": { repair: ["coerce", "round", "clamp"] } }),
  summary: z.string().min(1).meta({ "x-vouch": { repair: ["trim"] } }),
});
const eligibility = Contract.fromZod(Eligibility);

export function render(raw: string): string {
  const verdict = eligibility.check(raw);
  if (!verdict.accepted) return `no verdict yet (${verdict.problems.map((p) => p.code).join(", ")})`;
  for (const r of verdict.repairs) console.error(`repaired: ${r.message}`);
  const { verdict: said, matchScore, summary } = verdict.value; // typed by the schema
  return `${said} (${matchScore}/100): ${summary}`;
}

export function strict(raw: string): z.infer<typeof Eligibility> | null {
  try {
    return eligibility.parse(raw);
  } catch (e) {
    if (e instanceof VouchRefused) return null;
    throw e;
  }
}

console.log(render('{"verdict": "maybe", "matchScore": "142", "summary": "  Close.  "}'));
console.log(render('{"verdict": "likely", "matchScore": 80, "summary": "Sure."}'));
console.log(strict("```json\n{}\n```"));
