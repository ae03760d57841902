// Shared by the tests: the repository, the vouch CLI built from it (the oracle for
// byte-for-byte equality), the shared material, and a scripted OpenAI-compatible fake.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const EXAMPLES = join(ROOT, "examples");

/** The vouch CLI: $VOUCH_BIN, else the workspace's debug or release build, else built now. */
export function vouchBin() {
  const given = process.env.VOUCH_BIN;
  const candidates = given ? [given] : [join(ROOT, "target/debug/vouch"), join(ROOT, "target/release/vouch")];
  for (const c of candidates) if (existsSync(c)) return c;
  const built = spawnSync("cargo", ["build", "--quiet", "-p", "vouch-cli"], { cwd: ROOT, stdio: "inherit" });
  if (built.status !== 0) throw new Error(`no vouch CLI at ${candidates} and cargo could not build it`);
  return join(ROOT, "target/debug/vouch");
}

/** Run the CLI; stdout as a Buffer. */
export function vouch(args, input) {
  const r = spawnSync(vouchBin(), args, { input, maxBuffer: 1 << 30 });
  if (r.error) throw r.error;
  return r;
}

/** The shared material (VOUCH_SHARED, default ../shared): a test that needs it says so
 * loudly without it, and fails under CI=true. Returns null to skip. */
export function sharedDir(t) {
  const shared = process.env.VOUCH_SHARED ?? join(ROOT, "..", "shared");
  if (existsSync(join(shared, "bench", "gen.py"))) return shared;
  const message = `the shared material is not at ${shared} (set VOUCH_SHARED)`;
  if (process.env.CI === "true") throw new Error(message);
  console.error(`\n!!!!! ${message}: SKIPPING !!!!!\n`);
  t.skip(message);
  return null;
}

/**
 * An OpenAI-compatible chat endpoint on loopback answering a script of replies in
 * order (a string: the content; an object: `{stream: [pieces]}` sent as SSE), and
 * recording each request's body.
 */
export async function fakeModel(script) {
  const replies = [...script];
  const seen = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const request = JSON.parse(body);
      seen.push(request);
      const next = replies.length > 0 ? replies.shift() : "";
      const base = { id: `chatcmpl-${seen.length}`, created: 1, model: request.model };
      if (typeof next === "object" && next !== null && Array.isArray(next.stream)) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        next.stream.forEach((piece, i) => {
          const chunk = { ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta: i === 0 ? { role: "assistant", content: piece } : { content: piece }, finish_reason: null }] };
          res.write(`data: ${JSON.stringify(chunk)}\n\n`);
        });
        res.write(`data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`);
        res.end("data: [DONE]\n\n");
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ...base, object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: next }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    });
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address();
  return { baseURL: `http://127.0.0.1:${port}/v1`, seen, close: () => new Promise((ok) => server.close(ok)) };
}

/** A string's bytes as vouch checks them: its UTF-8, where each unpaired surrogate
 * (which has none) is the three bytes UTF-8's pattern gives it, as Python's
 * `surrogatepass` writes them: no UTF-8 reader accepts them (not U+FFFD, which
 * `Buffer.from` writes). Written here unit by unit, apart from the binding's Rust. */
export function checkedBytes(text) {
  const out = [];
  for (let i = 0; i < text.length; i++) {
    const u = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (u >= 0xd800 && u <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out.push(...Buffer.from(text.slice(i, i + 2), "utf8"));
      i++;
    } else if (u >= 0xd800 && u <= 0xdfff) {
      out.push(0xe0 | (u >> 12), 0x80 | ((u >> 6) & 0x3f), 0x80 | (u & 0x3f));
    } else {
      out.push(...Buffer.from(String.fromCharCode(u), "utf8"));
    }
  }
  return Buffer.from(out);
}
