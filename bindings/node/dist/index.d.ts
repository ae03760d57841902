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
import { type ZodLike, type ZodOutput } from "./zod";
export type { Position, Problem, Repair, Finding, ContractMistake, UnknownKeyword } from "../native";
export type { ZodLike, ZodOutput } from "./zod";
/**
 * A reply exactly as the model sent it: its text, or its bytes (a Buffer, any
 * other TypedArray or a DataView, read as the bytes it views; an ArrayBuffer).
 */
export type Raw = string | Buffer | ArrayBufferView | ArrayBuffer;
/** The contract does not compile: `mistakes` lists every one, with keyword and location. */
export declare class ContractError extends Error {
    /** Every mistake in the document, in order. */
    readonly mistakes: native.ContractMistake[];
    constructor(mistakes: native.ContractMistake[]);
}
/** The provider cannot express the contract without weakening it, or is unknown. */
export declare class ExportError extends Error {
    /** `unknown_provider` or `cannot_export`. */
    readonly code: string;
    constructor(code: string, message: string);
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
/** The contract refused the reply; `verdict` carries every problem. */
export declare class VouchRefused extends Error {
    /** The refusal, with its problems. */
    readonly verdict: Refused;
    constructor(verdict: Refused);
}
/** A reply checked while it streams. */
export declare class StreamCheck<T = unknown> {
    #private;
    /**
     * Feed the next piece (a string or bytes of any size; a character split
     * across pieces is fine, a surrogate pair split across strings too):
     * `"pending"` while some completion could still be accepted, `"refused"`
     * once none can (stop the model then).
     */
    feed(piece: Raw): "pending" | "refused";
    /** `"pending"` or `"refused"`. */
    get progress(): "pending" | "refused";
    /** Why it is refused (empty while pending). */
    get problems(): native.Problem[];
    /** The bytes received when the refusal became certain (null while pending). */
    get decidedAt(): number | null;
    /** Bytes received so far. */
    get received(): number;
    /** The value so far, for a display while the rest streams: never a vouched value. */
    get partial(): unknown;
    /** The verdict `check` gives on everything fed, byte for byte; the check then starts again, empty. */
    finish(): Verdict<T>;
}
/**
 * A JSON Schema document (with `x-vouch`): plain objects and arrays, or JSON
 * text (a string, or UTF-8 bytes: a Buffer, another TypedArray, a DataView or
 * an ArrayBuffer).
 */
export type ContractDocument = string | Buffer | ArrayBufferView | ArrayBuffer | Record<string, unknown> | boolean;
/**
 * A compiled contract: one document for the check, the provider's schema and
 * the prompt. `T` is the type of a vouched value: give it yourself, or let
 * `Contract.fromZod` infer it.
 */
export declare class Contract<T = unknown> {
    #private;
    /**
     * Compile a contract from its document (plain objects, or JSON text as a
     * string or UTF-8 bytes); throws `ContractError` listing every mistake.
     */
    constructor(document: ContractDocument);
    /**
     * The contract of a Zod 4 schema: its JSON Schema (`schema.toJSONSchema()`,
     * the output side), with `x-vouch` declared through `.meta()`. A part Zod
     * would check but JSON Schema cannot say (`.refine`, `.superRefine`,
     * `.check` with a function, `.trim()`-like overwrites, transforms, dates)
     * is refused with its path, never dropped: vouch would not check it.
     */
    static fromZod<S extends ZodLike>(schema: S): Contract<ZodOutput<S>>;
    /** Check one reply, exactly as the model sent it. */
    check(raw: Raw): Verdict<T>;
    /**
     * The vouched value, or throw `VouchRefused` carrying the verdict. A gate
     * finding does not throw (test `check(raw).passed` for a gate).
     */
    parse(raw: Raw): T;
    /**
     * Check many replies on worker threads, across the cores, in order. The
     * event loop is never held for long: replies cross in chunks.
     */
    checkMany(raws: Iterable<Raw>): Promise<Verdict<T>[]>;
    /** A check of one reply fed piece by piece as it streams (see `streamCheck` for the OpenAI SDK's stream). */
    stream(): StreamCheck<T>;
    /** Plain-language instructions for the model, from the same contract. */
    prompt(): string;
    /**
     * The schema to send the provider (`openai`, `anthropic`, `gemini`,
     * `json-schema`); with `name`, wrapped as the request's `response_format`.
     * Throws `ExportError` when the provider cannot say the contract without
     * weakening it.
     */
    schema(provider?: "openai" | "anthropic" | "gemini" | "json-schema", name?: string): Record<string, unknown>;
    /** The contract's document as compact JSON text (compiles to this contract again). */
    get document(): string;
    /** Keywords the contract holds that vouch does not know. */
    get unknownKeywords(): native.UnknownKeyword[];
}
/** A chat message, OpenAI's shape; the SDK's own message type fits. */
export interface Message {
    role: string;
    content?: unknown;
    [key: string]: unknown;
}
/** What `call` may return: the reply's text or bytes (as `check` takes them), or nothing (a round spent). */
export type Reply = Raw | null | undefined;
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
    /** Rounds at most, a whole number from 1 to 100 (default 2). */
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
export declare function rounds<T>(contract: Contract<T>, call: (messages: Message[]) => Promise<Reply> | Reply, options?: RoundsOptions<T>): Promise<Outcome<T>>;
/** One chunk of the OpenAI Node SDK's chat completion stream (the fields vouch reads). */
export interface ChatCompletionChunkLike {
    choices?: Array<{
        index?: number;
        delta?: {
            content?: string | null;
        } | null;
        finish_reason?: string | null;
    }>;
}
/** What `streamCheck` reads of a stream. */
export interface StreamCheckOptions {
    /** The choice to check (its `index`; default 0): each choice is a reply of its own. */
    index?: number;
}
/**
 * Check a reply while the OpenAI Node SDK streams it: feeds each chunk's
 * `delta.content` to a `StreamCheck` and yields the progress after each one.
 * Stop reading (and abort the stream) at the first `"refused"`; when it
 * ends, `finish()` is `check`'s verdict on the whole reply.
 *
 * The reply is one choice's deltas, gathered by their `index` as the SDK
 * gathers them (`options.index`, default 0; a choice without one is 0):
 * with `n > 1` a chunk may hold another choice's delta, which is another
 * reply and is never fed into this one.
 *
 * ```ts
 * const live = contract.stream();
 * for await (const progress of streamCheck(live, await client.chat.completions.create({ ..., stream: true }))) {
 *   if (progress === "refused") break; // the model cannot get it right now: stop paying for it
 * }
 * const verdict = live.finish();
 * ```
 */
export declare function streamCheck<T>(check: StreamCheck<T>, chunks: AsyncIterable<ChatCompletionChunkLike>, options?: StreamCheckOptions): AsyncGenerator<"pending" | "refused", void, undefined>;
