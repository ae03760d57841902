// The official OpenAI Node SDK (openai-node) as a client of `vouch serve`.
//
// Run by crates/vouch-server/tests/sdk.rs as
//   node openai_node.mjs <npm prefix> <scenario>[=<base url>]...
// with a client token in VOUCH_TOKEN. Each scenario runs against its own
// gateway: the base URL (ending in /v1) given after `=`, else VOUCH_BASE_URL.
// The SDK and Zod are loaded from the prefix that sources/generate installed
// (target/sources/zod3 or zod4), through its own node_modules. Prints one
// JSON line per scenario of what the SDK gave back; the Rust test asserts on
// it. A scenario whose SDK call goes some unexpected way prints its stack as
// `unexpected` (and the script exits non-zero at the end).
//
// maxRetries: 0 everywhere: the SDK retries 408/409/429/5xx on its own by
// default, which would make the upstream's request count depend on the SDK.

import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const [prefix, ...scenarios] = process.argv.slice(2);
let baseURL = process.env.VOUCH_BASE_URL;
const require = createRequire(resolve(prefix, 'package.json'));
const OpenAI = require('openai');
const { VERSION } = require('openai/version');
const { zodResponseFormat } = require('openai/helpers/zod');
const zodPackage = require('zod/package.json');
const { z } = require('zod');

const MESSAGES = [{ role: 'user', content: 'Read back the plate.' }];
const MODEL = 'fake-model';
const PLATE_FORMAT = { type: 'json_schema', json_schema: { name: 'plate', schema: {} } };

function client() {
  return new OpenAI({
    baseURL,
    apiKey: process.env.VOUCH_TOKEN,
    maxRetries: 0,
    timeout: 10_000,
  });
}

/** What an SDK error lets its caller read. */
function errorSeen(e) {
  const body = e && typeof e.error === 'object' && e.error !== null ? e.error : {};
  return {
    class: e?.constructor?.name,
    is_api_error: e instanceof OpenAI.APIError,
    is_unprocessable: e instanceof OpenAI.UnprocessableEntityError,
    status: e?.status ?? null,
    code: e?.code ?? null,
    type: e?.type ?? null,
    message: e?.message ?? null,
    problems: (body.problems ?? []).map((p) => p.code),
    error_class: body.class ?? null,
    contract: body.contract ?? null,
    outcome_header: e?.headers?.get?.('x-vouch-outcome') ?? null,
  };
}

async function accepted() {
  const completion = await client().chat.completions.create({
    model: MODEL,
    messages: MESSAGES,
    response_format: PLATE_FORMAT,
  });
  return {
    content: JSON.parse(completion.choices[0].message.content),
    finish_reason: completion.choices[0].finish_reason,
    vouch: completion.vouch ?? null,
    usage_total: completion.usage?.total_tokens ?? null,
  };
}

async function refused() {
  try {
    const completion = await client().chat.completions.create({
      model: MODEL,
      messages: MESSAGES,
      response_format: PLATE_FORMAT,
    });
    return { raised: false, content: completion.choices[0].message.content };
  } catch (e) {
    if (!(e instanceof OpenAI.APIError)) throw e;
    return { raised: true, ...errorSeen(e) };
  }
}

/** `client.chat.completions.stream(...)`: the helper that accumulates. */
async function helperStream(c) {
  const deltas = [];
  let vouch = null;
  let contentDone = null;
  try {
    const stream = c.chat.completions.stream({ model: MODEL, messages: MESSAGES, response_format: PLATE_FORMAT });
    stream.on('content.delta', ({ delta }) => deltas.push(delta));
    // With a plain response_format (not zodResponseFormat) the helper does
    // not parse: `parsed` is null and the caller parses `content`.
    stream.on('content.done', ({ content }) => {
      contentDone = content;
    });
    for await (const chunk of stream) {
      if (chunk.vouch) vouch = chunk.vouch;
    }
    const final = await stream.finalChatCompletion();
    return {
      raised: false,
      content: deltas.join(''),
      final_content: final.choices[0].message.content,
      finish_reason: final.choices[0].finish_reason,
      content_done: contentDone,
      vouch,
      final_vouch: final.vouch ?? null,
    };
  } catch (e) {
    if (!(e instanceof OpenAI.APIError)) throw e;
    return { raised: true, content: deltas.join(''), error: errorSeen(e) };
  }
}

/** `create({stream: true})`: the plain iterator of chunks. */
async function createStream(c) {
  const deltas = [];
  let vouch = null;
  let finish = null;
  try {
    const stream = await c.chat.completions.create({
      model: MODEL,
      messages: MESSAGES,
      response_format: PLATE_FORMAT,
      stream: true,
    });
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice?.delta?.content) deltas.push(choice.delta.content);
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.vouch) vouch = chunk.vouch;
    }
    return { raised: false, content: deltas.join(''), finish_reason: finish, vouch };
  } catch (e) {
    if (!(e instanceof OpenAI.APIError)) throw e;
    return { raised: true, content: deltas.join(''), error: errorSeen(e) };
  }
}

async function streamBoth() {
  const c = client();
  return { helper: await helperStream(c), create: await createStream(c) };
}

const Plate = z.object({
  productPresent: z.boolean(),
  productTextPresent: z.boolean(),
  garbledText: z.boolean(),
});

async function parse() {
  const completion = await client().chat.completions.parse({
    model: MODEL,
    messages: MESSAGES,
    response_format: zodResponseFormat(Plate, 'PlateZod'),
  });
  const parsed = completion.choices[0].message.parsed;
  return {
    parsed,
    // The parsed value is what Zod's own parse gave back.
    zod_accepts: Plate.safeParse(parsed).success,
    vouch: completion.vouch ?? null,
  };
}

/** The stream helper with zodResponseFormat: parsed on content.done and in
 * the final completion. */
async function parseStream() {
  const deltas = [];
  let doneParsed = null;
  const stream = client().chat.completions.stream({
    model: MODEL,
    messages: MESSAGES,
    response_format: zodResponseFormat(Plate, 'PlateZod'),
  });
  stream.on('content.delta', ({ delta }) => deltas.push(delta));
  stream.on('content.done', ({ parsed }) => {
    doneParsed = parsed ?? null;
  });
  const final = await stream.finalChatCompletion();
  const parsed = final.choices[0].message.parsed;
  return {
    content: deltas.join(''),
    done_parsed: doneParsed,
    parsed,
    zod_accepts: Plate.safeParse(parsed).success,
  };
}

const SCENARIOS = {
  accepted,
  refused,
  stream_accepted: streamBoth,
  stream_refused: streamBoth,
  parse,
  parse_stream: parseStream,
};

const versions = { openai: VERSION, zod: zodPackage.version, node: process.version };
let failed = false;
for (const arg of scenarios) {
  const at = arg.indexOf('=');
  const name = at < 0 ? arg : arg.slice(0, at);
  baseURL = at < 0 ? process.env.VOUCH_BASE_URL : arg.slice(at + 1);
  let seen;
  try {
    seen = await SCENARIOS[name]();
  } catch (e) {
    failed = true;
    seen = { unexpected: String(e?.stack ?? e) };
  }
  console.log(JSON.stringify({ scenario: name, versions, ...seen }));
}
process.exitCode = failed ? 1 : 0;
