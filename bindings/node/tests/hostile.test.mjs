// No native crash on any hostile reply `vouch audit --out` writes, for both bundled
// contracts: each reply is checked (as a Buffer and as a string), streamed a byte at a
// time and checked in one checkMany, in a child process (a crash there is a signal
// here, not a lost test run); each verdict is the CLI's, and the audit's.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { EXAMPLES, vouch } from "./common.mjs";

const CHILD = fileURLToPath(new URL("./hostile_child.mjs", import.meta.url));

for (const name of ["plate", "eligibility"]) {
  test(`every hostile reply of the ${name} audit: no crash, the audit's verdict`, () => {
    const contract = join(EXAMPLES, "contracts", `${name}.json`);
    const dir = mkdtempSync(join(tmpdir(), `vouch-hostile-${name}-`));
    try {
      const audit = vouch(["audit", "-c", contract, "--out", dir]);
      assert.ok(audit.status === 0 || audit.status === 1, audit.stderr.toString());
      const index = JSON.parse(readFileSync(join(dir, "index.json"), "utf8"));
      assert.ok(index.length >= 50, `${index.length} hostile replies`);
      const child = spawnSync(process.execPath, [CHILD, contract, dir], { encoding: "utf8", maxBuffer: 1 << 28 });
      assert.equal(child.signal, null, `the child died of ${child.signal}: ${child.stderr}`);
      assert.equal(child.status, 0, child.stderr);
      const seen = JSON.parse(child.stdout);
      assert.equal(seen.length, index.length);
      for (const [i, entry] of index.entries()) {
        assert.equal(seen[i].outcome === "refused", entry.verdict === "refused", entry.file);
        assert.equal(seen[i].passed, entry.pass, entry.file);
        assert.deepEqual(seen[i].codes, entry.codes, entry.file);
      }
      console.log(`${name}: ${index.length} hostile replies checked, streamed and batched without a crash`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
