"use strict";
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
Object.defineProperty(exports, "__esModule", { value: true });
exports.Contract = exports.StreamCheck = exports.VouchRefused = exports.ExportError = exports.ContractError = void 0;
exports.rounds = rounds;
exports.streamCheck = streamCheck;
const node_util_1 = require("node:util");
const zod_1 = require("./zod");
// The addon: built by the package's install script (cargo), or by `npm run generate`.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const addon = require("../vouch.node");
/**
 * Bytes as a Buffer over the same memory (no copy): every ArrayBufferView
 * (a TypedArray's `toString` would give its numbers, a DataView's
 * `"[object DataView]"`) and an ArrayBuffer; null for anything else.
 */
function bytesOf(value) {
    if (Buffer.isBuffer(value))
        return value;
    if (ArrayBuffer.isView(value))
        return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    if (node_util_1.types.isAnyArrayBuffer(value))
        return Buffer.from(value);
    return null;
}
/** What a value is, for an error message. */
function described(value) {
    if (value === null || value === undefined)
        return String(value);
    const name = typeof value === "object" ? Object.getPrototypeOf(value)?.constructor?.name : typeof value;
    if (typeof name !== "string" || name === "")
        return "an object";
    return /^[AEIOaeio]/.test(name) ? `an ${name}` : `a ${name}`;
}
/** A reply's bytes as a Buffer (see `bytesOf`); any other value but a string throws a `TypeError`. */
function replyBytes(raw) {
    const bytes = bytesOf(raw);
    if (bytes === null) {
        throw new TypeError(`vouch: a reply is a string or a Buffer (or other bytes: a TypedArray, a DataView or an ArrayBuffer), not ${described(raw)}`);
    }
    return bytes;
}
/** The contract does not compile: `mistakes` lists every one, with keyword and location. */
class ContractError extends Error {
    /** Every mistake in the document, in order. */
    mistakes;
    constructor(mistakes) {
        super(mistakes.map((m) => m.message).join("\n"));
        this.name = "ContractError";
        this.mistakes = mistakes;
    }
}
exports.ContractError = ContractError;
/** The provider cannot express the contract without weakening it, or is unknown. */
class ExportError extends Error {
    /** `unknown_provider` or `cannot_export`. */
    code;
    constructor(code, message) {
        super(message);
        this.name = "ExportError";
        this.code = code;
    }
}
exports.ExportError = ExportError;
const NO_VALUE = Symbol("no value yet");
/** What the native `check` answers for a reply that passed exactly as sent. */
const PASSED_AS_SENT = 0;
/** What the native `check` answers for a reply certain to be refused, its problems not yet written. */
const REFUSED_UNREPORTED = 1;
/** How a verdict's line starts (`vouch check --json`, the core's one shape). */
const ACCEPTED_LINE = '{"outcome":"accepted",';
const PASSED_LINE = '{"outcome":"accepted","pass":true,';
/** JSON's white space at either end of a text. */
const JSON_WS_EDGES = /^[ \t\n\r]+|[ \t\n\r]+$/g;
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
    #contract;
    #raw;
    /** Passed as sent: `#raw` is the reply's text, and the vouched text. */
    #sent;
    /** Certainly refused, not yet reported: `#raw` is the reply, checked again when the report is read. */
    #refused;
    #line;
    /** The contract allows `big_integers`: a value may hold an integer a number would round. */
    #bigIntegers;
    #native;
    #read = null;
    #wholeRead = null;
    #value = NO_VALUE;
    constructor(contract, raw, line, whole, bigIntegers, refused = false) {
        this.#contract = contract;
        this.#bigIntegers = bigIntegers;
        this.#raw = raw;
        this.#refused = refused;
        this.#sent = line === null && whole === null && !refused;
        this.#line = line;
        this.#native = whole;
    }
    /** The whole native verdict, looked up again from the reply when first needed. */
    #whole() {
        if (this.#native === null) {
            // #contract and #raw are set whenever #native is not (see `answered`).
            this.#native = this.#contract.verdict(this.#raw);
        }
        return this.#native;
    }
    #lineRead() {
        if (this.#read === null)
            this.#read = JSON.parse(this.#line);
        return this.#read;
    }
    /** The whole native verdict's line, read by JSON.parse (a `__proto__` key in a repair's value stays an own property). */
    #wholeLine() {
        if (this.#wholeRead === null)
            this.#wholeRead = JSON.parse(this.#whole().text());
        return this.#wholeRead;
    }
    get outcome() {
        return this.accepted ? "accepted" : "refused";
    }
    get passed() {
        if (this.#sent)
            return true;
        if (this.#refused)
            return false;
        return this.#line !== null ? this.#line.startsWith(PASSED_LINE) : this.#whole().passed;
    }
    get accepted() {
        if (this.#sent)
            return true;
        if (this.#refused)
            return false;
        return this.#line !== null ? this.#line.startsWith(ACCEPTED_LINE) : this.#whole().accepted;
    }
    get json() {
        if (this.#sent)
            return this.#raw.replace(JSON_WS_EDGES, "");
        return this.accepted ? (this.#whole().json ?? undefined) : undefined;
    }
    get value() {
        if (this.#value === NO_VALUE) {
            if (this.#bigIntegers)
                this.#exactIntegers();
            // The vouched text: keys unique, every value checked, every number read
            // by JSON.parse as vouch read it. JSON.parse makes `__proto__` an own
            // data property, never the object's prototype.
            if (this.#sent)
                this.#value = JSON.parse(this.#raw);
            else if (!this.accepted)
                this.#value = undefined;
            else if (this.#line !== null)
                this.#value = this.#lineRead().value;
            else
                this.#value = JSON.parse(this.#whole().json);
        }
        return this.#value;
    }
    /**
     * Throws when the vouched value holds an integer a JavaScript number would
     * round (only a contract allowing `big_integers` lets one through): the
     * value handed over is never another number than the one vouched. A run
     * of 16 digits is the least such an integer has; without one, no scan.
     */
    #exactIntegers() {
        const seen = this.#sent ? this.#raw : !this.accepted ? null : (this.#line ?? this.#whole().json);
        if (seen == null || !SIXTEEN_DIGITS.test(seen))
            return;
        const text = this.#sent ? this.#raw : this.json;
        const inexact = inexactInteger(text);
        if (inexact !== null) {
            throw new TypeError(`vouch: the integer at ${inexact.path === "" ? "(root)" : inexact.path} (${inexact.digits}) is beyond JavaScript's exact range ` +
                "(±(2^53−1)): a number would round it, so `value` does not hand it over; read `json` (the vouched text) " +
                "with a BigInt-aware JSON parser");
        }
    }
    get problems() {
        if (this.#sent)
            return [];
        return this.#line !== null ? this.#lineRead().problems : this.#whole().problems;
    }
    get repairs() {
        if (this.#sent || this.#refused)
            return [];
        return this.#line !== null ? this.#lineRead().repairs : this.#wholeLine().repairs;
    }
    get findings() {
        if (this.#sent || this.#refused)
            return [];
        return this.#line !== null ? this.#lineRead().findings : this.#whole().findings;
    }
    reask() {
        return this.accepted ? null : this.#whole().reask();
    }
    toJSON() {
        return this.#line ?? this.#whole().text();
    }
    /** A verdict has no truth value: test `passed` or `accepted`. */
    [Symbol.toPrimitive]() {
        throw new TypeError("a Verdict has no primitive value: test verdict.passed (accepted, no finding) or verdict.accepted");
    }
    get [Symbol.toStringTag]() {
        return "Verdict";
    }
}
/** A whole native verdict (a stream's, a round's). */
function wrap(v, bigIntegers) {
    return new VerdictImpl(null, null, null, v, bigIntegers);
}
/** Sixteen digits in a row: the fewest an integer beyond ±(2^53−1) is written with. */
const SIXTEEN_DIGITS = /\d{16}/;
/** A JSON number token, read from where the scan stands. */
const NUMBER_TOKEN = /-?\d+(\.\d+)?([eE][+-]?\d+)?/y;
/**
 * The first integer in the JSON text `text` that a number would not hold
 * exactly, with its JSON Pointer; null when there is none. Only integers
 * written without a fraction or exponent can be one: vouch refuses any other
 * number a double would not hold, `big_integers` or not.
 */
function inexactInteger(text) {
    // The path to the value being read: each open container's key or index.
    const path = [];
    let i = 0;
    while (i < text.length) {
        const c = text.charCodeAt(i);
        if (c === 0x22 /* " */) {
            let end = i + 1;
            while (end < text.length && text.charCodeAt(end) !== 0x22)
                end += text.charCodeAt(end) === 0x5c /* \ */ ? 2 : 1;
            const token = text.slice(i, end + 1);
            i = end + 1;
            while (i < text.length && " \t\n\r".includes(text.charAt(i)))
                i++;
            // A key: the member's name is the path's last part.
            if (text.charAt(i) === ":" && path.length > 0)
                path[path.length - 1] = JSON.parse(token);
        }
        else if (c === 0x7b /* { */) {
            path.push("");
            i++;
        }
        else if (c === 0x5b /* [ */) {
            path.push(0);
            i++;
        }
        else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
            path.pop();
            i++;
        }
        else if (c === 0x2c /* , */) {
            const last = path[path.length - 1];
            if (typeof last === "number")
                path[path.length - 1] = last + 1;
            i++;
        }
        else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
            NUMBER_TOKEN.lastIndex = i;
            const m = NUMBER_TOKEN.exec(text);
            const token = m === null ? text.charAt(i) : m[0];
            i += token.length;
            if (m !== null && m[1] === undefined && m[2] === undefined && token.length >= 16 && BigInt(token) !== BigInt(Number(token))) {
                return { path: path.map((p) => "/" + String(p).replace(/~/g, "~0").replace(/\//g, "~1")).join(""), digits: token };
            }
        }
        else {
            i++;
        }
    }
    return null;
}
/**
 * The verdict from the native check's answer on `raw`. `owned`: `raw` is
 * this package's own copy (a caller's Buffer is copied, as the caller may
 * reuse it before the verdict is read).
 */
function answered(contract, raw, answer, owned, bigIntegers) {
    const kept = typeof raw === "string" ? raw : answer === PASSED_AS_SENT ? raw.toString("utf8") : owned ? raw : Buffer.from(raw);
    if (answer === REFUSED_UNREPORTED)
        return new VerdictImpl(contract, kept, null, null, bigIntegers, true);
    return new VerdictImpl(contract, kept, answer === PASSED_AS_SENT ? null : answer, null, bigIntegers);
}
/** The contract refused the reply; `verdict` carries every problem. */
class VouchRefused extends Error {
    /** The refusal, with its problems. */
    verdict;
    constructor(verdict) {
        super("the reply was refused: " + verdict.problems.map((p) => p.message).join("; "));
        this.name = "VouchRefused";
        this.verdict = verdict;
    }
}
exports.VouchRefused = VouchRefused;
/** A reply checked while it streams. */
class StreamCheck {
    #native;
    #bigIntegers;
    /**
     * A high surrogate that ended the last string piece, held until the next:
     * its low half may open that one (fed alone, each half would be refused
     * as unpaired, where `check` reads the pair as one character).
     */
    #held = "";
    /** @internal */
    constructor(s, bigIntegers = false) {
        this.#native = s;
        this.#bigIntegers = bigIntegers;
    }
    /**
     * Feed the next piece (a string or bytes of any size; a character split
     * across pieces is fine, a surrogate pair split across strings too):
     * `"pending"` while some completion could still be accepted, `"refused"`
     * once none can (stop the model then).
     */
    feed(piece) {
        if (typeof piece !== "string") {
            const bytes = replyBytes(piece);
            this.#release();
            return this.#native.feed(bytes);
        }
        let text = this.#held + piece;
        this.#held = "";
        const last = text.charCodeAt(text.length - 1);
        if (last >= 0xd800 && last <= 0xdbff) {
            this.#held = text.slice(-1);
            text = text.slice(0, -1);
            if (text === "")
                return this.#native.progress;
        }
        return this.#native.feed(text);
    }
    /** Feeds a held high surrogate, unpaired: refused where it stands, as `check` refuses one. */
    #release() {
        if (this.#held !== "") {
            const held = this.#held;
            this.#held = "";
            this.#native.feed(held);
        }
    }
    /** `"pending"` or `"refused"`. */
    get progress() {
        return this.#native.progress;
    }
    /** Why it is refused (empty while pending). */
    get problems() {
        return this.#native.problems;
    }
    /** The bytes received when the refusal became certain (null while pending). */
    get decidedAt() {
        return this.#native.decidedAt;
    }
    /** Bytes received so far. */
    get received() {
        return this.#native.received;
    }
    /** The value so far, for a display while the rest streams: never a vouched value. */
    get partial() {
        // Text read by JSON.parse: a `__proto__` member stays an own property.
        const text = this.#native.partialJson;
        return text == null ? undefined : JSON.parse(text);
    }
    /** The verdict `check` gives on everything fed, byte for byte; the check then starts again, empty. */
    finish() {
        this.#release();
        return wrap(this.#native.finish(), this.#bigIntegers);
    }
}
exports.StreamCheck = StreamCheck;
/** How many replies `checkMany` hands the workers at a time: small enough that
 * the workers are never left waiting while the event loop copies a chunk in
 * or makes a chunk's verdicts, large enough that the crossing is paid
 * rarely (measured: 256 with 16 in flight scaled best on two cores). */
const CHUNK = 256;
/** The most UTF-16 units (or bytes) of replies in one chunk, unless one reply is longer. */
const CHUNK_UNITS = 1024 * 1024;
/** How many chunks are copied and queued for the workers at once: what bounds `checkMany`'s copies. */
const IN_FLIGHT = 16;
/** A `checkMany` answer kind: the reply's verdict line is the chunk's next. */
const LINE = 2;
/** A contract document that is not JSON, at `location` (a JSON Pointer). */
function notJson(location, what) {
    const at = location === "" ? "(root)" : location;
    return new ContractError([{ kind: "not_json", keyword: "", location, message: `the contract is not JSON: ${at}: ${what}` }]);
}
/** A surrogate without its other half: not a character, so not UTF-8 either. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/**
 * A contract document given as JavaScript values, as JSON text. Only what
 * JSON has is written: plain objects (prototype `Object.prototype` or null)
 * and arrays, strings, finite numbers, booleans and null. Anything else
 * throws `ContractError` with its location, never turned silently into
 * something else as `JSON.stringify` would (a Map into `{}`, a Uint8Array
 * into `{"0": …}`, a Date or anything with `toJSON` into what that returns,
 * NaN into null). A member whose value is undefined is left out, as
 * `JSON.stringify` does (an optional field); an array's is refused.
 */
function documentText(document) {
    const parts = [];
    const open = new Set();
    const write = (value, at) => {
        switch (typeof value) {
            case "string":
                parts.push(JSON.stringify(value));
                return;
            case "boolean":
                parts.push(value ? "true" : "false");
                return;
            case "number":
                if (!Number.isFinite(value))
                    throw notJson(at, `${value} is not a JSON number`);
                parts.push(JSON.stringify(value));
                return;
            case "object":
                break;
            default:
                throw notJson(at, `a ${typeof value} is not a JSON value`);
        }
        if (value === null) {
            parts.push("null");
            return;
        }
        const isArray = Array.isArray(value);
        const proto = Object.getPrototypeOf(value);
        if (!(proto === null || (isArray ? proto === Array.prototype : proto === Object.prototype))) {
            throw notJson(at, `${described(value)} is not a plain object or array (give its content as plain objects, arrays and values, or the contract as JSON text)`);
        }
        if (typeof value.toJSON === "function") {
            throw notJson(at, "an object with a toJSON method is not written as it is: give what toJSON returns");
        }
        if (open.has(value))
            throw notJson(at, "the object holds itself (a cycle)");
        open.add(value);
        if (isArray) {
            const items = value;
            parts.push("[");
            for (let i = 0; i < items.length; i++) {
                if (i > 0)
                    parts.push(",");
                const item = items[i];
                if (item === undefined)
                    throw notJson(`${at}/${i}`, "undefined (or a hole) is not a JSON value");
                write(item, `${at}/${i}`);
            }
            parts.push("]");
        }
        else {
            parts.push("{");
            let first = true;
            for (const key of Object.keys(value)) {
                const item = value[key];
                if (item === undefined)
                    continue;
                if (!first)
                    parts.push(",");
                first = false;
                parts.push(JSON.stringify(key), ":");
                write(item, `${at}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`);
            }
            parts.push("}");
        }
        open.delete(value);
    };
    try {
        write(document, "");
    }
    catch (e) {
        if (e instanceof ContractError)
            throw e;
        // A getter or a proxy that throws, a document too deep to walk.
        throw new ContractError([{ kind: "not_json", keyword: "", location: "", message: `the contract is not JSON: ${String(e)}` }]);
    }
    return parts.join("");
}
/** The contract allows `big_integers` (a root `x-vouch` allowance; the compiled document is compact JSON). */
function allowsBigIntegers(document) {
    if (!document.includes('"big_integers"'))
        return false;
    const root = JSON.parse(document);
    const allow = typeof root === "object" && root !== null ? root["x-vouch"]?.allow : undefined;
    return Array.isArray(allow) && allow.includes("big_integers");
}
/**
 * A compiled contract: one document for the check, the provider's schema and
 * the prompt. `T` is the type of a vouched value: give it yourself, or let
 * `Contract.fromZod` infer it.
 */
class Contract {
    #native;
    /** The contract's slot on this thread: what the hot calls take (no class instance read back). */
    #id;
    /** The contract allows `big_integers`: a vouched value may hold an integer a number would round. */
    #bigIntegers;
    /**
     * Compile a contract from its document (plain objects, or JSON text as a
     * string or UTF-8 bytes); throws `ContractError` listing every mistake.
     */
    constructor(document) {
        let text;
        if (typeof document === "string") {
            // Node would write a lone surrogate as U+FFFD: the contract would say
            // another string than the one given (the object form refuses it too).
            const lone = LONE_SURROGATE.exec(document);
            if (lone !== null) {
                const unit = lone[0].charCodeAt(0).toString(16).toUpperCase();
                throw notJson("", `the text holds a lone surrogate (U+${unit}, at index ${lone.index}), which is not a character`);
            }
            text = document;
        }
        else {
            text = bytesOf(document) ?? documentText(document);
        }
        const compiled = addon.compile(text);
        if (Array.isArray(compiled))
            throw new ContractError(compiled);
        this.#native = compiled;
        this.#id = compiled.id;
        this.#bigIntegers = allowsBigIntegers(compiled.document);
    }
    /**
     * The contract of a Zod 4 schema: its JSON Schema (`schema.toJSONSchema()`,
     * the output side), with `x-vouch` declared through `.meta()`. A part Zod
     * would check but JSON Schema cannot say (`.refine`, `.superRefine`,
     * `.check` with a function, `.trim()`-like overwrites, transforms, dates)
     * is refused with its path, never dropped: vouch would not check it.
     */
    static fromZod(schema) {
        const made = (0, zod_1.fromZodSchema)(schema);
        if ("mistakes" in made)
            throw new ContractError(made.mistakes);
        return new Contract(made.document);
    }
    /** Check one reply, exactly as the model sent it. */
    check(raw) {
        if (typeof raw === "string")
            return answered(this.#native, raw, addon.checkText(this.#id, raw), false, this.#bigIntegers);
        const bytes = replyBytes(raw);
        return answered(this.#native, bytes, addon.checkBytes(this.#id, bytes), false, this.#bigIntegers);
    }
    /**
     * The vouched value, or throw `VouchRefused` carrying the verdict. A gate
     * finding does not throw (test `check(raw).passed` for a gate).
     */
    parse(raw) {
        const verdict = this.check(raw);
        if (!verdict.accepted)
            throw new VouchRefused(verdict);
        return verdict.value;
    }
    /**
     * Check many replies on worker threads, across the cores, in order. The
     * event loop is never held for long: replies cross in chunks.
     */
    async checkMany(raws) {
        // A string is iterable too: each of its characters would be checked as a reply.
        if (typeof raws === "string" || bytesOf(raws) !== null) {
            throw new TypeError("checkMany takes an iterable of replies, not one reply");
        }
        // Bytes are copied now: the caller may reuse them while the chunks cross.
        const all = [];
        for (const raw of raws)
            all.push(typeof raw === "string" ? raw : Buffer.from(replyBytes(raw)));
        const out = new Array(all.length);
        const contract = this.#native;
        // Chunks cross in ahead of the workers, IN_FLIGHT at a time, so the
        // workers always have one to check while the event loop copies the next
        // in and makes the last one's verdicts. Each reply crosses on its own: a
        // string is copied out of V8 once (joining them first was measured
        // slower: V8's join of two-byte strings runs at a fraction of a copy).
        const inFlight = [];
        let sent = 0;
        const fill = () => {
            while (inFlight.length < IN_FLIGHT && sent < all.length) {
                let end = sent;
                for (let units = 0; end < all.length && end - sent < CHUNK; end++) {
                    units += all[end].length;
                    if (units > CHUNK_UNITS && end > sent)
                        break;
                }
                const answers = contract.checkMany(all.slice(sent, end));
                // Handled now as well as when its turn comes: should an earlier chunk
                // fail first, this one is never awaited, and its failure must not
                // surface as an unhandled rejection (which ends a Node process).
                answers.catch(() => undefined);
                inFlight.push([sent, answers]);
                sent = end;
            }
        };
        fill();
        for (let next = inFlight.shift(); next !== undefined; next = inFlight.shift()) {
            fill();
            const [start, pending] = next;
            const { kinds, lines } = await pending;
            for (let i = 0, line = 0; i < kinds.length; i++) {
                const kind = kinds[i];
                const answer = kind === LINE ? lines[line++] : kind;
                out[start + i] = answered(contract, all[start + i], answer, true, this.#bigIntegers);
            }
        }
        return out;
    }
    /** A check of one reply fed piece by piece as it streams (see `streamCheck` for the OpenAI SDK's stream). */
    stream() {
        return new StreamCheck(this.#native.stream(), this.#bigIntegers);
    }
    /** Plain-language instructions for the model, from the same contract. */
    prompt() {
        return this.#native.prompt();
    }
    /**
     * The schema to send the provider (`openai`, `anthropic`, `gemini`,
     * `json-schema`); with `name`, wrapped as the request's `response_format`.
     * Throws `ExportError` when the provider cannot say the contract without
     * weakening it.
     */
    schema(provider = "openai", name) {
        const exported = this.#native.schema(provider, name);
        if (exported.schema == null)
            throw new ExportError(exported.error ?? "cannot_export", exported.message ?? "cannot export");
        // Text read by JSON.parse: a `__proto__` property stays an own property.
        return JSON.parse(exported.schema);
    }
    /** The contract's document as compact JSON text (compiles to this contract again). */
    get document() {
        return this.#native.document;
    }
    /** Keywords the contract holds that vouch does not know. */
    get unknownKeywords() {
        return this.#native.unknownKeywords;
    }
    /** @internal */
    get native() {
        return this.#native;
    }
    /** @internal The contract allows `big_integers`. */
    get bigIntegers() {
        return this.#bigIntegers;
    }
}
exports.Contract = Contract;
/** The most rounds one ask may take (the core's bound). */
const MAX_ROUNDS = 100;
/**
 * Ask with your own client, check each reply, ask again in the core's
 * words, then refuse and keep the last good value, marked.
 *
 * `call(messages)` sends the conversation (OpenAI chat format) and returns
 * the reply's text. Never throws for a refusal; your client's errors pass
 * through.
 */
async function rounds(contract, call, options = {}) {
    const { maxRounds = 2, fallback, messages = [] } = options;
    // Checked here: the native call would wrap a negative or huge number, or cut a fraction.
    if (typeof maxRounds !== "number") {
        const given = typeof maxRounds === "string" ? JSON.stringify(maxRounds) : String(maxRounds);
        const kind = maxRounds === null ? "" : `, ${described(maxRounds)}`;
        throw new TypeError(`maxRounds must be a whole number from 1 to ${MAX_ROUNDS} (got ${given}${kind})`);
    }
    if (!Number.isInteger(maxRounds) || maxRounds < 1 || maxRounds > MAX_ROUNDS) {
        throw new RangeError(`maxRounds must be a whole number from 1 to ${MAX_ROUNDS} (got ${String(maxRounds)})`);
    }
    const fallbackText = fallback === undefined ? null : JSON.stringify(fallback);
    let state;
    try {
        state = new addon.NativeRounds(contract.native, maxRounds, fallbackText);
    }
    catch (e) {
        throw new RangeError(e instanceof Error ? e.message : String(e));
    }
    const convo = [...messages];
    const first = convo[0];
    if (first !== undefined && first.role === "system" && typeof first.content === "string") {
        convo[0] = { ...first, content: state.systemMessage(first.content) };
    }
    else {
        convo.unshift({ role: "system", content: state.systemMessage() });
    }
    for (;;) {
        const reply = await call([...convo]);
        const sent = reply == null || typeof reply === "string" ? (reply ?? "") : bytesOf(reply);
        if (sent === null) {
            throw new TypeError(`call(messages) must return the reply's text (string, bytes or null), not ${described(reply)}`);
        }
        // Nothing sent is refused as an empty reply: a round spent.
        const step = state.reply(sent);
        if (step === null)
            break;
        if (step.assistant != null)
            convo.push({ role: "assistant", content: step.assistant });
        convo.push({ role: "user", content: step.user });
    }
    const answer = state.answer;
    const big = contract.bigIntegers;
    const answered = answer === null ? null : wrap(answer, big);
    const fallbackVerdict = state.fallback;
    return {
        outcome: state.outcome,
        source: state.source,
        // Read when asked, as a verdict's: an integer a number would round throws there, not here.
        get value() {
            return answered === null || !answered.accepted ? undefined : answered.value;
        },
        passed: state.source === "model" && answered !== null && answered.passed,
        rounds: state.verdicts.map((v) => wrap(v, big)),
        fallback: fallbackVerdict === null ? null : wrap(fallbackVerdict, big),
    };
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
async function* streamCheck(check, chunks, options = {}) {
    const index = options.index ?? 0;
    for await (const chunk of chunks) {
        let piece = "";
        for (const choice of chunk.choices ?? []) {
            const content = choice?.delta?.content;
            if ((choice?.index ?? 0) === index && typeof content === "string")
                piece += content;
        }
        const progress = piece.length > 0 ? check.feed(piece) : check.progress;
        yield progress;
        if (progress === "refused")
            return;
    }
}
