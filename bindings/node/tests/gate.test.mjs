// The founding gate written with vouch (examples/gates/plate_gate_vouch.ts), compiled
// by tsc and run by `vouch audit --against` on every hostile reply: 0 fail-opens, beside
// the story's two hand-written gates (the fail-open one and the fixed one).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT, vouch } from "./common.mjs";

const PKG = join(ROOT, "bindings", "node");

function audit(gate) {
  const out = vouch(["audit", "-c", "examples/contracts/plate.json", "--against", gate, "--json"]);
  return { status: out.status, report: JSON.parse(out.stdout.toString()) };
}

test("vouch audit --against the vouch gate: 0 fail-opens, 0 over-strict", () => {
  const dir = join(ROOT, "target", "node", "gates");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "node_modules"), { recursive: true });
  symlinkSync(PKG, join(dir, "node_modules", "vouch"), "dir");
  // Compiled as a user compiles it (tsc, CommonJS); `vouch` resolves through node_modules.
  execFileSync(join(PKG, "node_modules", ".bin", "tsc"), ["-p", join(PKG, "tsconfig.gate.json")], { cwd: PKG, stdio: "inherit" });
  const gate = `node ${join(dir, "plate_gate_vouch.js")}`;
  process.chdir(ROOT);
  const ours = audit(gate);
  const failOpen = audit("node examples/gates/plate_gate_failopen.mjs");
  const fixed = audit("node examples/gates/plate_gate_fixed.mjs");
  console.log(
    `fail-opens on ${ours.report.hostile} hostile replies: vouch gate ${ours.report.passed_your_gate}, ` +
      `fixed gate ${fixed.report.passed_your_gate}, fail-open gate ${failOpen.report.passed_your_gate}`,
  );
  assert.equal(ours.report.passed_your_gate, 0, JSON.stringify(ours.report.fail_open));
  assert.deepEqual(ours.report.fail_open, []);
  assert.deepEqual(ours.report.over_strict, [], "every reply the contract passes, the gate passes");
  assert.equal(ours.status, 0);
  assert.ok(ours.report.hostile >= 50);
  assert.ok(failOpen.report.passed_your_gate >= 40 && fixed.report.passed_your_gate >= 1, "the audit still finds the story's fail-opens");
});
