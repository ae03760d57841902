// The founding story's gate, as it ran for weeks: each answer is read as
// `parsed.x === true`. A reply of {}, true, [] or {"productPresent": "no"}
// produces no problems, so it PASSES: the gate fails open exactly when the
// model misbehaves. (vouch audit --against finds this in one run.)
//
// Usage: node plate_gate_failopen.mjs < reply   (exit 0 = the plate passes)
import { readFileSync } from "node:fs";

const parsed = JSON.parse(readFileSync(0, "utf8"));
const problems = [];
if (parsed.productPresent === true) problems.push("a product is still in frame");
if (parsed.productTextPresent === true) problems.push("product text is still readable");
if (parsed.garbledText === true) problems.push("the plate shows garbled text");
process.exit(problems.length === 0 ? 0 : 1);
