// The story's fail-closed fix: every answer must be a real boolean, or the
// model did not answer and the plate does not pass. What JSON.parse cannot
// see still gets through: a repeated key (the last one wins) and undeclared
// properties. vouch audit --against lists exactly those.
//
// Usage: node plate_gate_fixed.mjs < reply   (exit 0 = the plate passes)
import { readFileSync } from "node:fs";

let parsed;
try {
  parsed = JSON.parse(readFileSync(0, "utf8"));
} catch {
  process.exit(1); // unreadable: no answer
}
if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) process.exit(1);
const answers = ["productPresent", "productTextPresent", "garbledText"];
for (const key of answers) {
  if (typeof parsed[key] !== "boolean") process.exit(1); // missing, null, "no": no answer
}
process.exit(answers.some((key) => parsed[key] === true) ? 1 : 0);
