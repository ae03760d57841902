// The founding gate, written with vouch: the plate passes only when the contract
// accepts the reply and no gate finding is raised. No `as`, no `=== true`: a reply
// that is unreadable, cut off, missing an answer, or answers "no" for false is
// refused by the contract, and a refused verdict has no value to read.
//
// Usage: node plate_gate_vouch.js [CONTRACT] < reply   (exit 0 = the plate passes)
import { readFileSync } from "node:fs";
import { Contract } from "vouch";

const plate = new Contract(readFileSync(process.argv[2] ?? "examples/contracts/plate.json"));
const verdict = plate.check(readFileSync(0));
process.exit(verdict.passed ? 0 : 1);
