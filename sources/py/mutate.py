"""Mutated replies: each valid reply broken one way at a time (wrong types,
missing and extra keys, out of range, bad enum values, null, strings for
numbers, wrong tags...). The same rules as sources/js/mutate.mjs."""
from __future__ import annotations

import copy
import json

MAX_PER_MODEL = 120


def _nodes(value, path=()):
    """Every node of a JSON value with its path, breadth first, at most 60."""
    out, queue = [], [(path, value)]
    while queue and len(out) < 60:
        p, v = queue.pop(0)
        out.append((p, v))
        if isinstance(v, dict):
            queue.extend((p + (k,), c) for k, c in v.items())
        elif isinstance(v, list):
            queue.extend((p + (i,), c) for i, c in enumerate(v))
    return out


def _pointer(path):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _replace(root, path, new):
    if not path:
        return new
    root = copy.deepcopy(root)
    node = root
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = new
    return root


def _delete(root, path):
    root = copy.deepcopy(root)
    node = root
    for p in path[:-1]:
        node = node[p]
    del node[path[-1]]
    return root


def _variants(v):
    """(operation, replacement) pairs for one node."""
    if v is None:
        yield "wrong_type", 0
        yield "wrong_type", "null"
        return
    yield "null", None
    if isinstance(v, bool):
        yield "string_for_bool", "true" if v else "false"
        yield "number_for_bool", 1 if v else 0
        yield "flipped", not v
    elif isinstance(v, (int, float)):
        yield "string_for_number", json.dumps(v)
        yield "big", v * 1000 + 1001
        yield "negative", -abs(v) - 1000
        yield "fraction", v + 0.5
        yield "bool_for_number", True
    elif isinstance(v, str):
        yield "number_for_string", 123
        yield "empty_string", ""
        yield "other_string", v + "zz-not-in-enum"
        yield "upper", v.upper() + "X"
        yield "long_string", v + "x" * 300
        yield "padded", "  " + v + "  "
    elif isinstance(v, list):
        yield "empty_array", []
        if v:
            yield "first_item_alone", v[0]
            yield "duplicated_item", v + [v[0]]
            yield "extra_item", v + ["zz"]
        else:
            yield "string_item", ["zz"]
            yield "null_item", [None]
    elif isinstance(v, dict):
        yield "empty_object", {}
        yield "array_for_object", [v]
        yield "extra_key", dict(v, zz_extra=1)


def mutations(valid):
    """Distinct mutated replies of a list of valid values: [(op, path, text)]."""
    seen, out = set(json.dumps(x, sort_keys=True) for x in valid), []

    def add(op, path, value):
        text = json.dumps(value)
        key = json.dumps(value, sort_keys=True)
        if key not in seen and len(out) < MAX_PER_MODEL:
            seen.add(key)
            out.append({"op": op, "path": _pointer(path), "reply": text})

    for root in [{}, None, [], "text", 0, True]:
        add("root", (), root)
    for v in valid:
        for path, node in _nodes(v):
            if isinstance(node, dict) and path:
                pass
            if path and isinstance(path[-1], str):
                add("missing", path, _delete(v, path))
            for op, new in _variants(node):
                add(op, path, _replace(v, path, new))
    return out
