/**
 * vouch for Node and TypeScript: nothing a model says reaches your code
 * unless vouch vouches for it.
 *
 * A contract (JSON Schema with `x-vouch`, or a Zod 4 schema) checks each
 * reply exactly as the model sent it and fails closed: unreadable, cut off,
 * missing, null or wrong-typed is *refused*, told apart from a real finding.
 *
 * @example
 * ```ts
 * import { Contract } from "vouch";
 * const plate = new Contract<{ ok: boolean }>({
 *   type: "object", required: ["ok"], properties: { ok: { type: "boolean" } },
 * });
 * const verdict = plate.check('{"ok": true}');
 * if (verdict.passed) console.log(verdict.value.ok); // typed: boolean
 * plate.check("{}").problems[0].code;                 // "missing"
 * ```
 *
 * @packageDocumentation
 */

import type * as native from "../native";
import { fromZodSchema, type ZodLike, type ZodOutput } from "./zod";

export type { Position, Problem, Repair, Finding, ContractMistake, UnknownKeyword } from "../native";
export type { ZodLike, ZodOutput } from "./zod";

/**
 * The two hot calls, written against Node-API in `src/raw.rs` (napi-rs
 * declares only the functions it generates, in `native.d.ts`). Each checks
 * one reply given as it came (a string, or a Buffer read in place) with the
 * contract of this id, and answers `0` when it passed exactly as sent (the
 * caller's own text is the vouched text), `1` when it is certainly refused
 * (its problems not yet written: `NativeContract.verdict` writes them), else
 * the verdict as `vouch check --json` prints it. A value of another type
 * throws a `TypeError`.
 */
interface HotCalls {
  checkText(contract: number, text: string): 0 | 1 | string;
  checkBytes(contract: number, raw: Buffer): 0 | 1 | string;
}

// The addon: built by the package's install script (cargo), or by `npm run generate`.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const addon: typeof native & HotCalls = require("../vouch.node");

/** A reply exactly as the model sent it: its text, or its bytes. */
export type Raw = string | Buffer;

/** The contract does not compile: `mistakes` lists every one, with keyword and location. */
export class ContractError extends Error {
  /** Every mistake in the document, in order. */
  readonly mistakes: native.ContractMistake[];

  constructor(mistakes: native.ContractMistake[]) {
    super(mistakes.map((m) => m.message).join("\n"));
    this.name = "ContractError";
    this.mistakes = mistakes;
  }
}

/** The provider cannot express the contract without weakening it, or is unknown. */
export class ExportError extends Error {
  /** `unknown_provider` or `cannot_export`. */
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.name = "ExportError";
    this.code = code;
  }
}

/** What every verdict carries. */
interface VerdictCommon {
  /** Why the reply was refused (empty when accepted). */
  readonly problems: native.Problem[];
  /** Every change the contract's declared repairs made. */
  readonly repairs: native.Repair[];
  /** The gate's findings on an accepted reply. */
  readonly findings: native.Finding[];
  /** The user message vouch asks again with after a refusal (the core's words); null when accepted. */
  reask(): string | null;
  /** The verdict as `vouch check --json` prints it, byte for byte (without the newline). */
  toJSON(): string;
}

/** Accepted, and no gate finding: the one to branch on. */
export interface Passed<T> extends VerdictCommon {
  readonly outcome: "accepted";
  readonly accepted: true;
  readonly passed: true;
  /** The vouched value (repairs made), built on first access. */
  readonly value: T;
  /** The vouched value as compact JSON text. */
  readonly json: string;
}

/** Accepted, with gate findings: the model answered, and its answer is a real problem. */
export interface Flagged<T> extends VerdictCommon {
  readonly outcome: "accepted";
  readonly accepted: true;
  readonly passed: false;
  readonly value: T;
  readonly json: string;
}

/** Refused: the model did not answer, or its answer breaks the contract. */
export interface Refused extends VerdictCommon {
  readonly outcome: "refused";
  readonly accepted: false;
  readonly passed: false;
  readonly value: undefined;
  readonly json: undefined;
}

/**
 * The contract's verdict on one reply. Narrow it on `passed` (or
 * `accepted`) before reading `value`: the types will not let a refused
 * reply's value through.
 */
export type Verdict<T = unknown> = Passed<T> | Flagged<T> | Refused;

const NO_VALUE: unique symbol = Symbol("no value yet");

/** What the native `check` answers for a reply that passed exactly as sent. */
const PASSED_AS_SENT = 0;
/** What the native `check` answers for a reply certain to be refused, its problems not yet written. */
const REFUSED_UNREPORTED = 1;
/** How a verdict's line starts (`vouch check --json`, the core's one shape). */
const ACCEPTED_LINE = '{"outcome":"accepted",';
const PASSED_LINE = '{"outcome":"accepted","pass":true,';
/** JSON's white space at either end of a text. */
const JSON_WS_EDGES = /^[ \t\n\r]+|[ \t\n\r]+$/g;

/** A verdict's line, as read. */
interface Line {
  value: unknown;
  repairs: native.Repair[];
  findings: native.Finding[];
  problems: native.Problem[];
}

/**
 * The one implementation behind the three shapes of `Verdict`. It holds the
 * least the native check could answer, and asks for the rest when it is read:
 * - a pass as sent: the reply's own text, which *is* the vouched text (the
 *   value is read from it; nothing crossed back but a number);
 * - a certain refusal: only that; its problems, re-ask message and line
 *   are the whole verdict's, from checking the kept reply again when first
 *   read (a caller that branches on `accepted` pays for no report);
 * - any other verdict from `check`: its line (what `toJSON()` returns), read
 *   on first ask, with the reply kept to look again for the re-ask message
 *   and the vouched text;
 * - a whole native verdict (a stream's, a round's).
 */
class VerdictImpl {
  readonly #contract: native.NativeContract | null;
  readonly #raw: Raw | null;
  /** Passed as sent: `#raw` is the reply's text, and the vouched text. */
  readonly #sent: boolean;
  /** Certainly refused, not yet reported: `#raw` is the reply, checked again when the report is read. */
  readonly #refused: boolean;
  readonly #line: string | null;
  #native: native.NativeVerdict | null;
  #read: Line | null = null;
  #value: unknown = NO_VALUE;

  constructor(contract: native.NativeContract | null, raw: Raw | null, line: string | null, whole: native.NativeVerdict | null, refused = false) {
    this.#contract = contract;
    this.#raw = raw;
    this.#refused = refused;
    this.#sent = line === null && whole === null && !refused;
    this.#line = line;
    this.#native = whole;
  }

  /** The whole native verdict, looked up again from the reply when first needed. */
  #whole(): native.NativeVerdict {
    if (this.#native === null) {
      // #contract and #raw are set whenever #native is not (see `answered`).
      this.#native = (this.#contract as native.NativeContract).verdict(this.#raw as Raw);
    }
    return this.#native;
  }
  #lineRead(): Line {
    if (this.#read === null) this.#read = JSON.parse(this.#line as string) as Line;
    return this.#read;
  }

  get outcome(): "accepted" | "refused" {
    return this.accepted ? "accepted" : "refused";
  }
  get passed(): boolean {
    if (this.#sent) return true;
    if (this.#refused) return false;
    return this.#line !== null ? this.#line.startsWith(PASSED_LINE) : this.#whole().passed;
  }
  get accepted(): boolean {
    if (this.#sent) return true;
    if (this.#refused) return false;
    return this.#line !== null ? this.#line.startsWith(ACCEPTED_LINE) : this.#whole().accepted;
  }
  get json(): string | undefined {
    if (this.#sent) return (this.#raw as string).replace(JSON_WS_EDGES, "");
    return this.accepted ? (this.#whole().json ?? undefined) : undefined;
  }
  get value(): unknown {
    if (this.#value === NO_VALUE) {
      // The vouched text: keys unique, every value checked, every number read
      // by JSON.parse as vouch read it. JSON.parse makes `__proto__` an own
      // data property, never the object's prototype.
      if (this.#sent) this.#value = JSON.parse(this.#raw as string);
      else if (!this.accepted) this.#value = undefined;
      else if (this.#line !== null) this.#value = this.#lineRead().value;
      else this.#value = JSON.parse(this.#whole().json as string);
    }
    return this.#value;
  }
  get problems(): native.Problem[] {
    if (this.#sent) return [];
    return this.#line !== null ? this.#lineRead().problems : this.#whole().problems;
  }
  get repairs(): native.Repair[] {
    if (this.#sent || this.#refused) return [];
    return this.#line !== null ? this.#lineRead().repairs : this.#whole().repairs;
  }
  get findings(): native.Finding[] {
    if (this.#sent || this.#refused) return [];
    return this.#line !== null ? this.#lineRead().findings : this.#whole().findings;
  }
  reask(): string | null {
    return this.accepted ? null : this.#whole().reask();
  }
  toJSON(): string {
    return this.#line ?? this.#whole().text();
  }
  /** A verdict has no truth value: test `passed` or `accepted`. */
  [Symbol.toPrimitive](): never {
    throw new TypeError("a Verdict has no primitive value: test verdict.passed (accepted, no finding) or verdict.accepted");
  }
  get [Symbol.toStringTag](): string {
    return "Verdict";
  }
}

/** A whole native verdict (a stream's, a round's). */
function wrap<T>(v: native.NativeVerdict): Verdict<T> {
  return new VerdictImpl(null, null, null, v) as unknown as Verdict<T>;
}

/**
 * The verdict from the native check's answer on `raw`. `owned`: `raw` is
 * this package's own copy (a caller's Buffer is copied, as the caller may
 * reuse it before the verdict is read).
 */
function answered<T>(contract: native.NativeContract, raw: Raw, answer: 0 | 1 | string, owned: boolean): Verdict<T> {
  const kept = typeof raw === "string" ? raw : answer === PASSED_AS_SENT ? raw.toString("utf8") : owned ? raw : Buffer.from(raw);
  if (answer === REFUSED_UNREPORTED) return new VerdictImpl(contract, kept, null, null, true) as unknown as Verdict<T>;
  return new VerdictImpl(contract, kept, answer === PASSED_AS_SENT ? null : answer, null) as unknown as Verdict<T>;
}

/** The contract refused the reply; `verdict` carries every problem. */
export class VouchRefused extends Error {
  /** The refusal, with its problems. */
  readonly verdict: Refused;

  constructor(verdict: Refused) {
    super("the reply was refused: " + verdict.problems.map((p) => p.message).join("; "));
    this.name = "VouchRefused";
    this.verdict = verdict;
  }
}

/** A reply checked while it streams. */
export class StreamCheck<T = unknown> {
  readonly #native: native.NativeStream;

  /** @internal */
  constructor(s: native.NativeStream) {
    this.#native = s;
  }

  /**
   * Feed the next piece (a string or Buffer of any size; a character split
   * across pieces is fine): `"pending"` while some completion could still be
   * accepted, `"refused"` once none can (stop the model then).
   */
  feed(piece: Raw): "pending" | "refused" {
    return this.#native.feed(piece);
  }
  /** `"pending"` or `"refused"`. */
  get progress(): "pending" | "refused" {
    return this.#native.progress;
  }
  /** Why it is refused (empty while pending). */
  get problems(): native.Problem[] {
    return this.#native.problems;
  }
  /** The bytes received when the refusal became certain (null while pending). */
  get decidedAt(): number | null {
    return this.#native.decidedAt;
  }
  /** Bytes received so far. */
  get received(): number {
    return this.#native.received;
  }
  /** The value so far, for a display while the rest streams: never a vouched value. */
  get partial(): unknown {
    return this.#native.partial ?? undefined;
  }
  /** The verdict `check` gives on everything fed, byte for byte; the check then starts again, empty. */
  finish(): Verdict<T> {
    return wrap<T>(this.#native.finish());
  }
}

/** How many replies `checkMany` hands the worker at a time: small enough that
 * copying them in and wrapping their verdicts never holds the event loop for
 * long, large enough that the crossing is paid rarely. */
const CHUNK = 2048;

/** A JSON Schema document (with `x-vouch`), as an object or JSON text. */
export type ContractDocument = string | Buffer | Record<string, unknown> | boolean;

/**
 * A compiled contract: one document for the check, the provider's schema and
 * the prompt. `T` is the type of a vouched value: give it yourself, or let
 * `Contract.fromZod` infer it.
 */
export class Contract<T = unknown> {
  readonly #native: native.NativeContract;
  /** The contract's slot on this thread: what the hot calls take (no class instance read back). */
  readonly #id: number;

  /** Compile a contract from its document (an object or JSON text); throws `ContractError` listing every mistake. */
  constructor(document: ContractDocument) {
    let text: string | Buffer;
    if (typeof document === "string" || Buffer.isBuffer(document)) {
      text = document;
    } else {
      try {
        text = JSON.stringify(document);
      } catch (e) {
        throw new ContractError([{ kind: "not_json", keyword: "", location: "", message: `the contract is not JSON: ${String(e)}` }]);
      }
      if (typeof text !== "string") {
        throw new ContractError([{ kind: "not_json", keyword: "", location: "", message: "the contract is not JSON" }]);
      }
    }
    const compiled = addon.compile(text);
    if (Array.isArray(compiled)) throw new ContractError(compiled);
    this.#native = compiled;
    this.#id = compiled.id;
  }

  /**
   * The contract of a Zod 4 schema: its JSON Schema (`schema.toJSONSchema()`,
   * the output side), with `x-vouch` declared through `.meta()`. A part Zod
   * would check but JSON Schema cannot say (`.refine`, `.superRefine`,
   * `.check` with a function, `.trim()`-like overwrites, transforms, dates)
   * is refused with its path, never dropped: vouch would not check it.
   */
  static fromZod<S extends ZodLike>(schema: S): Contract<ZodOutput<S>> {
    const made = fromZodSchema(schema);
    if ("mistakes" in made) throw new ContractError(made.mistakes);
    return new Contract<ZodOutput<S>>(made.document);
  }

  /** Check one reply, exactly as the model sent it. */
  check(raw: Raw): Verdict<T> {
    const answer = typeof raw === "string" ? addon.checkText(this.#id, raw) : addon.checkBytes(this.#id, raw);
    return answered<T>(this.#native, raw, answer, false);
  }

  /**
   * The vouched value, or throw `VouchRefused` carrying the verdict. A gate
   * finding does not throw (test `check(raw).passed` for a gate).
   */
  parse(raw: Raw): T {
    const verdict = this.check(raw);
    if (!verdict.accepted) throw new VouchRefused(verdict);
    return verdict.value;
  }

  /**
   * Check many replies on worker threads, across the cores, in order. The
   * event loop is never held for long: replies cross in chunks.
   */
  async checkMany(raws: Iterable<Raw>): Promise<Verdict<T>[]> {
    // A Buffer is copied now: the caller may reuse it while the chunks cross.
    const all: Raw[] = [];
    for (const raw of raws) all.push(Buffer.isBuffer(raw) ? Buffer.from(raw) : raw);
    const out: Verdict<T>[] = new Array(all.length);
    const contract = this.#native;
    // The next chunk crosses in while the workers check this one. Each reply
    // crosses on its own: a string is copied out of V8 once (joining them
    // first would copy each twice).
    let pending = all.length > 0 ? contract.checkMany(all.slice(0, CHUNK)) : null;
    for (let start = 0; pending !== null; start += CHUNK) {
      const next = start + CHUNK < all.length ? contract.checkMany(all.slice(start + CHUNK, start + 2 * CHUNK)) : null;
      const answers = await pending;
      for (let i = 0; i < answers.length; i++) out[start + i] = answered<T>(contract, all[start + i] as Raw, answers[i] as 0 | string, true);
      pending = next;
    }
    return out;
  }

  /** A check of one reply fed piece by piece as it streams (see `streamCheck` for the OpenAI SDK's stream). */
  stream(): StreamCheck<T> {
    return new StreamCheck<T>(this.#native.stream());
  }

  /** Plain-language instructions for the model, from the same contract. */
  prompt(): string {
    return this.#native.prompt();
  }

  /**
   * The schema to send the provider (`openai`, `anthropic`, `gemini`,
   * `json-schema`); with `name`, wrapped as the request's `response_format`.
   * Throws `ExportError` when the provider cannot say the contract without
   * weakening it.
   */
  schema(provider: "openai" | "anthropic" | "gemini" | "json-schema" = "openai", name?: string): Record<string, unknown> {
    const exported = this.#native.schema(provider, name);
    if (exported.schema == null) throw new ExportError(exported.error ?? "cannot_export", exported.message ?? "cannot export");
    return exported.schema as Record<string, unknown>;
  }

  /** The contract's document as compact JSON text (compiles to this contract again). */
  get document(): string {
    return this.#native.document;
  }

  /** Keywords the contract holds that vouch does not know. */
  get unknownKeywords(): native.UnknownKeyword[] {
    return this.#native.unknownKeywords;
  }

  /** @internal */
  get native(): native.NativeContract {
    return this.#native;
  }
}

/** A chat message, OpenAI's shape; the SDK's own message type fits. */
export interface Message {
  role: string;
  content?: unknown;
  [key: string]: unknown;
}

/** What `call` may return: the reply's text, or nothing (a round spent). */
export type Reply = string | Buffer | null | undefined;

/** How an ask ended. */
export interface Outcome<T> {
  /** `"accepted"` when a model reply was accepted, else `"refused"` (also when the fallback is returned). */
  readonly outcome: "accepted" | "refused";
  /** `"model"`, `"fallback"`, or null when there is no value. */
  readonly source: "model" | "fallback" | null;
  /** The accepted reply's value, the fallback's (marked by `source`), or undefined. */
  readonly value: T | undefined;
  /** A model reply was accepted with no gate finding (never for a fallback). */
  readonly passed: boolean;
  /** Every round's verdict, in order. */
  readonly rounds: Verdict<T>[];
  /** The fallback's own verdict, when one was given. */
  readonly fallback: Verdict<T> | null;
}

/** Options of `rounds`. */
export interface RoundsOptions<T> {
  /** Rounds at most, 1 to 100 (default 2). */
  maxRounds?: number;
  /** The last good value, kept and returned marked `source: "fallback"` when every round is refused, if it passes the contract itself. */
  fallback?: T;
  /** The conversation so far; a leading system message gets the contract's instructions after it. */
  messages?: Message[];
}

/**
 * Ask with your own client, check each reply, ask again in the core's
 * words, then refuse and keep the last good value, marked.
 *
 * `call(messages)` sends the conversation (OpenAI chat format) and returns
 * the reply's text. Never throws for a refusal; your client's errors pass
 * through.
 */
export async function rounds<T>(
  contract: Contract<T>,
  call: (messages: Message[]) => Promise<Reply> | Reply,
  options: RoundsOptions<T> = {},
): Promise<Outcome<T>> {
  const { maxRounds = 2, fallback, messages = [] } = options;
  const fallbackText = fallback === undefined ? null : JSON.stringify(fallback);
  let state: native.NativeRounds;
  try {
    state = new addon.NativeRounds(contract.native, maxRounds, fallbackText);
  } catch (e) {
    throw new RangeError(e instanceof Error ? e.message : String(e));
  }
  const convo: Message[] = [...messages];
  const first = convo[0];
  if (first !== undefined && first.role === "system" && typeof first.content === "string") {
    convo[0] = { ...first, content: state.systemMessage(first.content) };
  } else {
    convo.unshift({ role: "system", content: state.systemMessage() });
  }
  for (;;) {
    const reply = await call([...convo]);
    if (reply != null && typeof reply !== "string" && !Buffer.isBuffer(reply)) {
      throw new TypeError(`call(messages) must return the reply's text (string, Buffer or null), not ${typeof reply}`);
    }
    // Nothing sent is refused as an empty reply: a round spent.
    const step = state.reply(reply ?? "");
    if (step === null) break;
    if (step.assistant != null) convo.push({ role: "assistant", content: step.assistant });
    convo.push({ role: "user", content: step.user });
  }
  const answer = state.answer;
  const answered = answer === null ? null : wrap<T>(answer);
  const fallbackVerdict = state.fallback;
  return {
    outcome: state.outcome,
    source: state.source,
    value: answered === null || !answered.accepted ? undefined : answered.value,
    passed: state.source === "model" && answered !== null && answered.passed,
    rounds: state.verdicts.map((v) => wrap<T>(v)),
    fallback: fallbackVerdict === null ? null : wrap<T>(fallbackVerdict),
  };
}

/** One chunk of the OpenAI Node SDK's chat completion stream (the fields vouch reads). */
export interface ChatCompletionChunkLike {
  choices?: Array<{ delta?: { content?: string | null } | null; finish_reason?: string | null }>;
}

/**
 * Check a reply while the OpenAI Node SDK streams it: feeds each chunk's
 * `delta.content` to a `StreamCheck` and yields the progress after each one.
 * Stop reading (and abort the stream) at the first `"refused"`; when it
 * ends, `finish()` is `check`'s verdict on the whole reply.
 *
 * ```ts
 * const live = contract.stream();
 * for await (const progress of streamCheck(live, await client.chat.completions.create({ ..., stream: true }))) {
 *   if (progress === "refused") break; // the model cannot get it right now: stop paying for it
 * }
 * const verdict = live.finish();
 * ```
 */
export async function* streamCheck<T>(
  check: StreamCheck<T>,
  chunks: AsyncIterable<ChatCompletionChunkLike>,
): AsyncGenerator<"pending" | "refused", void, undefined> {
  for await (const chunk of chunks) {
    const piece = chunk.choices?.[0]?.delta?.content;
    const progress = typeof piece === "string" && piece.length > 0 ? check.feed(piece) : check.progress;
    yield progress;
    if (progress === "refused") return;
  }
}
