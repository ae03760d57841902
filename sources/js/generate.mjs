// Write one case file per (source, model) for the JavaScript sources.
//
//   node generate.mjs PREFIX 3 OUT   (PREFIX/node_modules has zod 3, zod-to-json-schema, openai)
//     zod3              zodToJsonSchema(schema, {postProcess: jsonDescription})
//     zod3_named        zodToJsonSchema(schema, {name, postProcess: jsonDescription}): root $ref + definitions
//     zod3_openai       zodToJsonSchema(schema, {target: "openAi", postProcess: jsonDescription})
//     openai_node_zod3  zodResponseFormat(schema, name).json_schema.schema (openai/helpers/zod)
//   node generate.mjs PREFIX 4 OUT   (PREFIX/node_modules has zod 4 and openai)
//     zod4              z.toJSONSchema(schema)
//     openai_node_zod4  zodResponseFormat(schema, name).json_schema.schema
//
// Each case holds the schema as the tool emits it (or the tool's own error),
// the valid replies (each accepted by schema.safeParse(JSON.parse(reply)), the
// validator zodResponseFormat's parser uses too) and the mutated replies with
// Zod's verdict.
import { createRequire } from "node:module";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { models } from "./models.mjs";
import { mutations } from "./mutate.mjs";

const [prefix, majorArg, out] = process.argv.slice(2);
const major = Number(majorArg);
const require = createRequire(join(prefix, "package.json"));
const version = (pkg) => JSON.parse(readFileSync(join(prefix, "node_modules", pkg, "package.json"), "utf8")).version;
const z = require("zod");
const { zodResponseFormat } = require("openai/helpers/zod");

let sources;
if (major === 3) {
  const { zodToJsonSchema, jsonDescription } = require("zod-to-json-schema");
  const zt = `zod ${version("zod")}, zod-to-json-schema ${version("zod-to-json-schema")}`;
  sources = {
    zod3: [zt, (s) => zodToJsonSchema(s, { postProcess: jsonDescription })],
    zod3_named: [zt, (s, name) => zodToJsonSchema(s, { name, postProcess: jsonDescription })],
    zod3_openai: [zt, (s) => zodToJsonSchema(s, { target: "openAi", postProcess: jsonDescription })],
    openai_node_zod3: [`zod ${version("zod")}, openai ${version("openai")}`, (s, name) => zodResponseFormat(s, name).json_schema.schema],
  };
} else {
  sources = {
    zod4: [`zod ${version("zod")}`, (s) => z.toJSONSchema(s)],
    openai_node_zod4: [`zod ${version("zod")}, openai ${version("openai")}`, (s, name) => zodResponseFormat(s, name).json_schema.schema],
  };
}

const accepts = (schema, text) => schema.safeParse(JSON.parse(text)).success;

// zodResponseFormat warns on the console for some shapes; keep its words in the case.
const warnings = [];
console.warn = (...args) => warnings.push(args.join(" "));

for (const [source, [tool, emit]] of Object.entries(sources)) {
  mkdirSync(join(out, source), { recursive: true });
  for (const [name, schema, valid] of models(z, major)) {
    const kase = { source, model: name, tool };
    warnings.length = 0;
    try {
      kase.schema = emit(schema, name);
    } catch (e) {
      kase.schema = null;
      kase.tool_error = `${e?.name}: ${e?.message}`;
    }
    if (warnings.length) kase.tool_warnings = [...warnings];
    const texts = valid.map((v) => JSON.stringify(v));
    for (const t of texts) {
      if (!accepts(schema, t)) {
        console.error(`${source}/${name}: Zod refuses the valid reply ${t}`);
        process.exit(1);
      }
    }
    kase.valid = texts.map((reply) => ({ reply }));
    kase.mutations = mutations(valid).map((m) => ({ ...m, tool: accepts(schema, m.reply) }));
    writeFileSync(join(out, source, `${name}.json`), JSON.stringify(kase, null, 1));
  }
}
