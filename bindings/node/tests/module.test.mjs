// One package, both module systems: `import` and `require` give the same classes
// (the ES module is the CommonJS module's face, so there is one addon, one state).
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";
import vouchDefault, * as esm from "vouch";

const cjs = createRequire(import.meta.url)("vouch");

test("import and require give the same exports", () => {
  for (const name of ["Contract", "ContractError", "ExportError", "StreamCheck", "VouchRefused", "rounds", "streamCheck"]) {
    assert.equal(typeof esm[name], "function", name);
    assert.equal(esm[name], cjs[name], name);
  }
  assert.equal(vouchDefault.Contract, cjs.Contract);
  const c = new cjs.Contract({ type: "boolean" });
  assert.ok(c instanceof esm.Contract);
  assert.equal(c.check("true").value, true);
});

test("compile errors, export errors and bad arguments are exceptions, never a crash", () => {
  assert.throws(() => new esm.Contract("{"), (e) => e instanceof esm.ContractError && e.mistakes[0].kind === "not_json");
  assert.throws(() => new esm.Contract(Buffer.from([0xff])), (e) => e instanceof esm.ContractError && /UTF-8/.test(e.message));
  assert.throws(
    () => new esm.Contract({ type: "object", properties: { a: { minimum: "x" }, b: { pattern: "(" } } }),
    (e) => e instanceof esm.ContractError && e.mistakes.length === 2 && e.mistakes[1].location === "/properties/b" && e.mistakes[1].keyword === "pattern",
  );
  const big = {};
  big.self = big;
  assert.throws(() => new esm.Contract(big), (e) => e instanceof esm.ContractError && e.mistakes[0].kind === "not_json");
  const c = new esm.Contract({ type: "object", required: ["ok"], properties: { ok: { type: "boolean" } } });
  assert.throws(() => c.schema("nobody"), (e) => e instanceof esm.ExportError && e.code === "unknown_provider");
  assert.equal(c.schema("openai", "plate").type, "json_schema");
  for (const provider of ["openai", "anthropic"]) {
    assert.throws(() => c.schema(provider, "plate check"), (e) => e instanceof esm.ExportError && e.code === "cannot_export" && /is not one .* takes/.test(e.message));
  }
  assert.deepEqual(c.schema("json-schema").required, ["ok"]);
  assert.ok(c.prompt().length > 0);
  assert.throws(() => c.check(42), /string|Buffer|Expect/i);
  assert.throws(() => c.check(), /string|Buffer|Expect|undefined/i);
  assert.equal(c.check("\u0000").outcome, "refused");
  assert.throws(() => c.parse("{}"), (e) => e instanceof esm.VouchRefused && e.verdict.problems[0].code === "missing" && e.verdict.problems[0].path === "/ok");
});
