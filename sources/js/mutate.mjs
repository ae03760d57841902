// Mutated replies: each valid reply broken one way at a time. The same rules
// as sources/py/mutate.py, so both languages' sources meet the same replies.

const MAX_PER_MODEL = 120;

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

function nodes(value) {
  const out = [];
  const queue = [[[], value]];
  while (queue.length && out.length < 60) {
    const [p, v] = queue.shift();
    out.push([p, v]);
    if (isObject(v)) for (const [k, c] of Object.entries(v)) queue.push([[...p, k], c]);
    else if (Array.isArray(v)) v.forEach((c, i) => queue.push([[...p, i], c]));
  }
  return out;
}

const pointer = (path) => path.map((p) => "/" + String(p).replaceAll("~", "~0").replaceAll("/", "~1")).join("");

function replace(root, path, fresh) {
  if (!path.length) return fresh;
  const copy = structuredClone(root);
  let node = copy;
  for (const p of path.slice(0, -1)) node = node[p];
  node[path[path.length - 1]] = fresh;
  return copy;
}

function remove(root, path) {
  const copy = structuredClone(root);
  let node = copy;
  for (const p of path.slice(0, -1)) node = node[p];
  delete node[path[path.length - 1]];
  return copy;
}

function* variants(v) {
  if (v === null) {
    yield ["wrong_type", 0];
    yield ["wrong_type", "null"];
    return;
  }
  yield ["null", null];
  if (typeof v === "boolean") {
    yield ["string_for_bool", v ? "true" : "false"];
    yield ["number_for_bool", v ? 1 : 0];
    yield ["flipped", !v];
  } else if (typeof v === "number") {
    yield ["string_for_number", JSON.stringify(v)];
    yield ["big", v * 1000 + 1001];
    yield ["negative", -Math.abs(v) - 1000];
    yield ["fraction", v + 0.5];
    yield ["bool_for_number", true];
  } else if (typeof v === "string") {
    yield ["number_for_string", 123];
    yield ["empty_string", ""];
    yield ["other_string", v + "zz-not-in-enum"];
    yield ["upper", v.toUpperCase() + "X"];
    yield ["long_string", v + "x".repeat(300)];
    yield ["padded", "  " + v + "  "];
  } else if (Array.isArray(v)) {
    yield ["empty_array", []];
    if (v.length) {
      yield ["first_item_alone", v[0]];
      yield ["duplicated_item", [...v, v[0]]];
      yield ["extra_item", [...v, "zz"]];
    } else {
      yield ["string_item", ["zz"]];
      yield ["null_item", [null]];
    }
  } else if (isObject(v)) {
    yield ["empty_object", {}];
    yield ["array_for_object", [v]];
    yield ["extra_key", { ...v, zz_extra: 1 }];
  }
}

// A canonical text (sorted keys) to drop duplicates.
const canonical = (v) => JSON.stringify(v, (_, x) => (isObject(x) ? Object.fromEntries(Object.entries(x).sort()) : x));

/** Distinct mutated replies of a list of valid values: [{op, path, reply}]. */
export function mutations(valid) {
  const seen = new Set(valid.map(canonical));
  const out = [];
  const add = (op, path, value) => {
    const key = canonical(value);
    if (!seen.has(key) && out.length < MAX_PER_MODEL) {
      seen.add(key);
      out.push({ op, path: pointer(path), reply: JSON.stringify(value) });
    }
  };
  for (const root of [{}, null, [], "text", 0, true]) add("root", [], root);
  for (const v of valid) {
    for (const [path, node] of nodes(v)) {
      if (path.length && typeof path[path.length - 1] === "string") add("missing", path, remove(v, path));
      for (const [op, fresh] of variants(node)) add(op, path, replace(v, path, fresh));
    }
  }
  return out;
}
