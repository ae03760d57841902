/**
 * Zod 4 schemas as contracts, without importing Zod: the schema brings its
 * own `toJSONSchema`, and its definition tree is read for what that method
 * drops without a word.
 */

import type { ContractMistake } from "../native";

/** A Zod 4 schema, as far as vouch reads it (structural: no import of zod). */
export interface ZodLike {
  readonly _zod: { readonly output: unknown; readonly def: unknown };
  toJSONSchema(params?: Record<string, unknown>): unknown;
}

/** The type a Zod 4 schema parses to (`z.output<S>`, which `z.infer` is). */
export type ZodOutput<S> = S extends { readonly _zod: { readonly output: infer O } } ? O : unknown;

/** The checks Zod runs that JSON Schema cannot say: `toJSONSchema` drops them. */
const UNSAID_CHECKS: Record<string, string> = {
  custom: "a refinement (.refine, .superRefine or .check with a function)",
  overwrite: "an overwrite (.trim(), .toLowerCase(), .toUpperCase(), .normalize() or .overwrite()), which changes the value Zod hands over,",
};

/**
 * The first construct of a regex source (read without the `u` or `v` flag,
 * as Zod runs it) whose meaning differs under Unicode semantics, which vouch
 * runs every pattern with: `.`, `[^…]`, `\S`, `\D`, `\W` and `\B` match one
 * UTF-16 unit without `u` but a whole character with it (so an astral
 * character is one match, not two); `\p`/`\P` is a letter without `u`, a
 * property with it; `\u{…}` is a repeated `u` without it; a character
 * outside the BMP, or a surrogate escaped, is two units (a class or a
 * quantifier takes half of it) without it. Null when there is none: the
 * pattern means the same either way (or does not compile with `u`, which
 * vouch reports).
 */
function modeDependent(source: string): string | null {
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const unit = source.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdfff) {
      const cp = source.codePointAt(i) as number;
      return cp > 0xffff ? `the character ${String.fromCodePoint(cp)} (outside the BMP)` : "a lone surrogate";
    }
    const c = source.charAt(i);
    if (c === "\\") {
      const next = source.charAt(i + 1);
      const nextUnit = source.charCodeAt(i + 1);
      if (nextUnit >= 0xd800 && nextUnit <= 0xdfff) continue; // read on the next turn
      i++;
      if ("SDWBpP".includes(next) && next !== "") return `\\${next}`;
      if (next === "u") {
        if (source.charAt(i + 1) === "{") return "\\u{…}";
        const hex = source.slice(i + 1, i + 5);
        if (/^[0-9a-fA-F]{4}$/.test(hex) && parseInt(hex, 16) >= 0xd800 && parseInt(hex, 16) <= 0xdfff) return `\\u${hex} (a surrogate)`;
      }
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      continue;
    }
    if (c === "[") {
      inClass = true;
      if (source.charAt(i + 1) === "^") return "a negated class [^…]";
    } else if (c === ".") {
      return "the wildcard .";
    }
  }
  return null;
}

/**
 * A regex flag that lets vouch take what Zod refuses, as Zod's JSON Schema
 * drops it (it writes the source alone): with `y` Zod matches at the start
 * only. (`g` is harmless, Zod tests from the start each time; with `i`, `m`
 * or `s` Zod matches more than vouch, which is then the stricter.)
 */
const DROPPED_FLAGS: Record<string, string> = {
  y: "y (sticky: Zod matches at the start only, vouch anywhere)",
};

/** Zod's own string formats that carry a pattern of Zod's but no default to rebuild it from. */
const ZOD_CUSTOM_FORMATS = /^(?:hostname|hex|(?:md5|sha1|sha256|sha384|sha512)_(?:hex|base64|base64url))$/;

/**
 * The caller's own regex in a string check, or null for Zod's own: a
 * `.regex()`, a `z.stringFormat(name, regex)`, or a pattern passed to a
 * built-in format (`z.email({ pattern })`), told from the format's default
 * by building the same check again without it.
 */
function ownPattern(check: unknown, def: Def): RegExp | null {
  const pattern = def.pattern;
  if (def.check !== "string_format" || !(pattern instanceof RegExp)) return null;
  if (def.format === "regex") return pattern;
  if (typeof def.format === "string" && ZOD_CUSTOM_FORMATS.test(def.format)) return null;
  let standard: unknown;
  try {
    const Built = (check as { constructor: new (d: unknown) => unknown }).constructor;
    standard = defOf(new Built({ ...def, pattern: undefined }) as ZodLike).pattern;
  } catch {
    standard = undefined;
  }
  // A format with no default of its own is one the caller made (z.stringFormat).
  return standard instanceof RegExp && String(standard) === String(pattern) ? null : pattern;
}

/** A place of the schema Zod checks and its JSON Schema does not say: `says` follows the place. */
function unexportable(keyword: string, path: string, says: string): ContractMistake {
  return { kind: "unexportable", keyword, location: path, message: `${path === "" ? "(root)" : path}: ${says}` };
}

/** A regex's mistake when it means another thing to vouch than to Zod. */
function regexMistake(check: unknown, def: Def, path: string): ContractMistake | null {
  // Only the caller's own: Zod's formats (z.email(), .lowercase(), …) write theirs,
  // which match alike in either mode (ASCII, or a class repeated over the whole
  // text), and .startsWith()-like checks write an escaped literal.
  const pattern = ownPattern(check, def);
  if (pattern === null) return null;
  const flag = [...pattern.flags].find((f) => f in DROPPED_FLAGS);
  if (flag !== undefined) {
    return unexportable(
      "pattern",
      path,
      `the regex ${String(pattern)} has the flag ${DROPPED_FLAGS[flag]}, and Zod's JSON Schema drops a regex's flags, ` +
        "so vouch could accept what Zod refuses: write the pattern without it (anchored with ^)",
    );
  }
  if (pattern.flags.includes("v")) {
    return unexportable(
      "pattern",
      path,
      `the regex ${String(pattern)} has the v flag, whose classes (set operations &&, --, nested classes) read ` +
        "otherwise under the u flag's semantics vouch runs patterns with, so vouch could accept what Zod refuses: " +
        "write it with the u flag",
    );
  }
  if (pattern.unicode) return null;
  const construct = modeDependent(pattern.source);
  if (construct === null) return null;
  return unexportable(
    "pattern",
    path,
    `the regex ${String(pattern)} has no u flag and holds ${construct}, which matches otherwise under the Unicode ` +
      "semantics vouch runs patterns with (Zod's JSON Schema drops a regex's flags), so vouch could accept what Zod refuses: " +
      "add the u flag, or write the pattern without it",
  );
}

/**
 * What `z.url()` checks beyond `format: "uri"`, which is all Zod's JSON
 * Schema writes of it: a `hostname` or `protocol` regex (`z.httpUrl()` has
 * both) is checked on the parsed URL, and `normalize` hands over the URL
 * rewritten.
 */
function urlMistake(def: Def, path: string): ContractMistake | null {
  if (def.check !== "string_format" || def.format !== "url") return null;
  const checked = ["protocol", "hostname"].filter((k) => def[k] instanceof RegExp);
  if (checked.length > 0) {
    return unexportable(
      "url",
      path,
      `the URL's ${checked.join(" and ")} check (z.httpUrl() has both) has no JSON Schema (Zod writes format: uri alone), ` +
        "so vouch would not check it: use z.url() with a .regex() that says it (say /^https:\\/\\//u), or check it after vouch",
    );
  }
  if (def.normalize === true) {
    return unexportable(
      "overwrite",
      path,
      `z.url({ normalize: true }) changes the value Zod hands over (the URL rewritten), which JSON Schema cannot say: drop normalize, or normalize after vouch`,
    );
  }
  return null;
}

/** `z.jwt({ alg })`: Zod checks the token's algorithm, its JSON Schema writes `format: jwt` alone. */
function jwtMistake(def: Def, path: string): ContractMistake | null {
  if (def.check !== "string_format" || def.format !== "jwt" || def.alg === undefined) return null;
  return unexportable(
    "jwt",
    path,
    `z.jwt({ alg }) checks the token's algorithm, which its JSON Schema (format: jwt) does not say, ` +
      `so vouch would take a token signed otherwise (alg "none"): use z.jwt() and check the algorithm after vouch`,
  );
}

/**
 * A template literal's pattern, as Zod builds it from the parts and runs it
 * (without the `u` flag), where it means otherwise under vouch's Unicode
 * semantics: a bounded string part (`[\s\S]{0,2}`) counts UTF-16 units in
 * Zod, characters in vouch. An unbounded one (`[\s\S]{0,}`) takes any text
 * either way.
 */
function templateMistake(schema: ZodLike, def: Def, path: string): ContractMistake | null {
  if (def.type !== "template_literal") return null;
  const pattern = (schema._zod as { pattern?: unknown }).pattern;
  if (!(pattern instanceof RegExp) || pattern.unicode) return null;
  const construct = pattern.flags.includes("v")
    ? "the v flag"
    : modeDependent(pattern.source.split("[\\s\\S]{0,}").join(""));
  if (construct === null) return null;
  return unexportable(
    "pattern",
    path,
    `the template literal's pattern ${String(pattern)} holds ${construct}, which Zod runs without the u flag ` +
      "(a string part's length in UTF-16 units) and vouch with Unicode semantics, so vouch could accept what Zod refuses: " +
      "drop the length bound of the string part, or check it after vouch",
  );
}

/**
 * A record whose keys are numbers with a check (`z.int()`, `.min(5)`): Zod
 * reads each key as a number and checks it, its JSON Schema writes only a
 * pattern of digits for the keys (`{"9007199254740993": …}` would pass).
 */
function recordKeyMistake(def: Def, path: string): ContractMistake | null {
  if (def.type !== "record" || !isZod(def.keyType)) return null;
  // The key's own type, through wrappers (optional, nullable, lazy, readonly,
  // a union's options): a number anywhere among them.
  const seen = new Set<unknown>();
  const todo: unknown[] = [def.keyType];
  let number = false;
  while (todo.length > 0 && !number) {
    const k = todo.pop();
    if (!isZod(k) || seen.has(k)) continue;
    seen.add(k);
    const kd = defOf(k);
    if (kd.type === "number") number = true;
    for (const inner of ["innerType", "in", "out"]) todo.push(kd[inner]);
    if (Array.isArray(kd.options)) todo.push(...kd.options);
    if (kd.type === "lazy" && typeof kd.getter === "function") {
      try {
        todo.push((kd.getter as () => unknown)());
      } catch {
        // toJSONSchema reports a getter that throws.
      }
    }
  }
  if (!number) return null;
  return unexportable(
    "propertyNames",
    path,
    "the record's keys are numbers: Zod reads each key as a number and checks it (finite, an integer, a bound), " +
      "which its JSON Schema does not say (it writes a pattern of digits, so a key of 309 digits, Infinity to Zod, " +
      "would pass): use string keys with z.string().regex() that says them",
  );
}

/** Keys every object inherits: absent from a reply, Zod reads the inherited member (a function) and refuses it. */
const INHERITED = new Set(Object.getOwnPropertyNames(Object.prototype));

/** An optional member named after an `Object.prototype` member (`toString`): see {@link INHERITED}. */
function inheritedKeyMistake(def: Def, path: string): ContractMistake[] {
  if (typeof def.shape !== "object" || def.shape === null) return [];
  const out: ContractMistake[] = [];
  for (const [key, child] of Object.entries(def.shape as Record<string, unknown>)) {
    if (INHERITED.has(key) && isZod(child) && defOf(child).type === "optional") {
      out.push(
        unexportable(
          "optional",
          `${path}/${pointerPart(key)}`,
          `the optional member ${JSON.stringify(key)} is named after a member every object inherits: absent, Zod ` +
            "reads the inherited function and refuses it, where the schema lets it be left out: make it required, or rename it",
        ),
      );
    }
  }
  return out;
}

/** A check with a function (`z.stringFormat(name, fn)`) or on a property (`z.property(key, schema)`): no JSON Schema. */
function functionCheckMistake(def: Def, path: string): ContractMistake | null {
  // With a regex (Zod's own formats, z.stringFormat(name, regex)) the function
  // is the regex's test, and Zod writes the pattern.
  if (def.check === "string_format" && typeof def.fn === "function" && !(def.pattern instanceof RegExp)) {
    return unexportable(
      "refine",
      path,
      `z.stringFormat(${JSON.stringify(def.format)}, fn) checks with a function, which its JSON Schema drops ` +
        `(writing format: ${JSON.stringify(def.format)} alone), so vouch would not check it: give it a regex, or check it after vouch`,
    );
  }
  if (def.check === "property") {
    return unexportable(
      "refine",
      path,
      `z.property(${JSON.stringify(def.property)}, …) checks a property of the value, which its JSON Schema drops, ` +
        "so vouch would not check it: say it with a constraint JSON Schema has (minItems…), or check it after vouch",
    );
  }
  return null;
}

/** The wrapper types whose one inner schema is the value's own. */
const INNER_KEYS = ["innerType", "in", "out", "left", "right", "element", "keyType", "valueType", "rest", "catchall"];

interface Def {
  type?: unknown;
  checks?: unknown;
  shape?: unknown;
  options?: unknown;
  items?: unknown;
  getter?: unknown;
  [key: string]: unknown;
}

function isZod(x: unknown): x is ZodLike {
  return typeof x === "object" && x !== null && "_zod" in x && typeof (x as { _zod: unknown })._zod === "object";
}

function defOf(s: ZodLike): Def {
  const def = (s._zod as { def?: unknown }).def;
  return typeof def === "object" && def !== null ? (def as Def) : {};
}

function pointerPart(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

/**
 * Every place in the schema where Zod would check something the exported
 * JSON Schema does not say, with the path of the value it applies to
 * (`/*` for each item or member). Walked with an explicit stack, each schema
 * once (recursive `z.lazy` schemas end).
 */
export function unsaid(root: ZodLike): ContractMistake[] {
  const mistakes: ContractMistake[] = [];
  const seen = new Set<unknown>();
  const stack: Array<[ZodLike, string]> = [[root, ""]];
  while (stack.length > 0) {
    const [schema, path] = stack.pop() as [ZodLike, string];
    if (seen.has(schema)) continue;
    seen.add(schema);
    const def = defOf(schema);
    // A string format (z.email(), …) is a check itself; .regex() adds one.
    const own = [
      regexMistake(schema, def, path),
      urlMistake(def, path),
      jwtMistake(def, path),
      templateMistake(schema, def, path),
      recordKeyMistake(def, path),
      functionCheckMistake(def, path),
      ...inheritedKeyMistake(def, path),
    ];
    for (const m of own) if (m !== null) mistakes.push(m);
    const checks = Array.isArray(def.checks) ? def.checks : [];
    for (const check of checks as unknown[]) {
      if (isZod(check)) {
        const checkDef = defOf(check);
        const ofCheck = [regexMistake(check, checkDef, path), urlMistake(checkDef, path), jwtMistake(checkDef, path), functionCheckMistake(checkDef, path)];
        for (const m of ofCheck) {
          if (m !== null) mistakes.push(m);
        }
      }
      const kind = isZod(check) ? (defOf(check).check as unknown) : undefined;
      if (typeof kind === "string" && kind in UNSAID_CHECKS) {
        mistakes.push(
          unexportable(
            kind === "custom" ? "refine" : kind,
            path,
            `${UNSAID_CHECKS[kind]} has no JSON Schema, so vouch would not check it: say it with a constraint JSON Schema has (min, max, regex, enum…) or an x-vouch repair (trim, …), or check it after vouch`,
          ),
        );
      }
    }
    const push = (child: unknown, at: string): void => {
      if (isZod(child)) stack.push([child, at]);
    };
    if (typeof def.shape === "object" && def.shape !== null) {
      for (const [key, child] of Object.entries(def.shape as Record<string, unknown>)) push(child, `${path}/${pointerPart(key)}`);
    }
    if (Array.isArray(def.options)) for (const child of def.options) push(child, path);
    if (Array.isArray(def.items)) def.items.forEach((child, i) => push(child, `${path}/${i}`));
    for (const key of INNER_KEYS) {
      const child = def[key];
      const itemwise = key === "element" || key === "valueType" || key === "rest" || key === "catchall";
      push(child, key === "keyType" ? path : itemwise ? `${path}/*` : path);
    }
    if (def.type === "lazy" && typeof def.getter === "function") {
      try {
        push((def.getter as () => unknown)(), path);
      } catch {
        // toJSONSchema reports a getter that throws.
      }
    }
  }
  return mistakes;
}

/** The document of a Zod schema's contract, or why there is none. */
export function fromZodSchema(schema: ZodLike): { document: string } | { mistakes: ContractMistake[] } {
  if (!isZod(schema) || typeof schema.toJSONSchema !== "function") {
    return {
      mistakes: [
        {
          kind: "not_zod",
          keyword: "",
          location: "",
          message: "Contract.fromZod takes a Zod 4 schema (one with .toJSONSchema()); for Zod 3 or zod/mini, pass z.toJSONSchema(schema) to new Contract()",
        },
      ],
    };
  }
  const mistakes = unsaid(schema);
  let exported: unknown;
  try {
    // The output side: what the model's reply must already be, with no
    // transform left to run; a default makes its field required.
    exported = schema.toJSONSchema({ target: "draft-2020-12", io: "output", unrepresentable: "throw", cycles: "ref", reused: "inline" });
  } catch (e) {
    mistakes.push({
      kind: "unexportable",
      keyword: "",
      location: "",
      message: `(root): Zod cannot write this schema as JSON Schema: ${e instanceof Error ? e.message : String(e)}`,
    });
  }
  if (mistakes.length > 0) return { mistakes };
  return { document: JSON.stringify(exported) };
}
