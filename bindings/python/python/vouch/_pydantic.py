"""What a Pydantic model checks that its JSON Schema does not say.

``Model.model_json_schema()`` is the contract ``Contract.from_pydantic``
compiles, but Pydantic's validator checks more than that schema says: a
``field_validator``, ``HttpUrl``'s schemes, ``EmailStr``'s deliverable
domain, a ``Decimal``'s digits, a regex class that is Unicode in Pydantic's
engine and ASCII in ECMA-262. Dropped without a word, each would let vouch
accept a reply the model refuses; :func:`unsaid` finds them in the model's
core schema (``__pydantic_core_schema__``), with the path of the value each
applies to, so ``from_pydantic`` refuses the model instead.
"""

from __future__ import annotations

import enum
import ipaddress
from typing import Any, Dict, List, Optional, Set, Tuple

Mistake = Dict[str, str]


def _said_functions() -> Set[Any]:
    """Validators whose JSON Schema says all they check (or more): the
    sweep in ``tests/test_pydantic_sources.py`` holds each one."""
    said: Set[Any] = {
        ipaddress.IPv4Address,
        ipaddress.IPv6Address,
        ipaddress.IPv4Network,
        ipaddress.IPv6Network,
        ipaddress.IPv4Interface,
        ipaddress.IPv6Interface,
    }
    try:
        from pydantic import networks, types

        said.update({types.SecretStr, types.SecretBytes})
        for name in ("IPvAnyAddress", "IPvAnyNetwork", "IPvAnyInterface"):
            kind = getattr(networks, name, None)
            validate = getattr(kind, "_validate", None)
            if validate is not None:
                said.add(getattr(validate, "__func__", validate))
    except ImportError:
        pass
    return said


def _function_of(node: Dict[str, Any]) -> Any:
    info = node.get("function")
    fn = info.get("function") if isinstance(info, dict) else None
    return getattr(fn, "__func__", fn)


def _describe(fn: Any) -> str:
    module = getattr(fn, "__module__", None) or "?"
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{module}.{name}"


def _regex_dialect(pattern: str) -> Optional[str]:
    """The first construct of a pattern that matches otherwise in Pydantic's
    regex engines (Rust's ``regex``, or Python's ``re``: Unicode classes and
    word boundaries) than in ECMA-262, which vouch runs, in the direction that
    lets vouch accept what Pydantic refuses: ``\\s`` and ``\\S`` (ECMA-262's
    ``\\s`` takes U+FEFF, Unicode's U+0085), ``\\W`` and ``\\D`` (ECMA-262's take
    ``é`` and ``٣``), ``\\b`` and ``\\B``, and ``\\d`` or ``\\w`` in a negated
    class. None when none."""
    in_class = False
    negated = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            e = pattern[i + 1]
            if e in "sSWDbB" and not (in_class and e in "bB"):
                return f"\\{e}"
            if in_class and negated and e in "dw":
                return f"\\{e} in a negated class"
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            negated = pattern[i + 1 : i + 2] == "^"
        i += 1
    return None


def unsaid(core_schema: Any) -> List[Mistake]:
    """Every place in a Pydantic core schema where the model's validator
    checks (or changes) something its JSON Schema does not say, with the
    JSON pointer of the value (``/*`` for each item or member). Walked with an
    explicit stack, each definition once."""
    said = _said_functions()
    mistakes: List[Mistake] = []
    definitions: Dict[str, Any] = {}
    visited: Set[str] = set()
    stack: List[Tuple[Any, str]] = [(core_schema, "")]
    # How a model's config has Pydantic read bytes from JSON ("utf8" unless said):
    # a config anywhere that decodes them makes every bytes field unsaid (a
    # definition is walked once, whichever model's config it was met under).
    decoded_bytes: Set[str] = set()
    # Patterns run by Python's ``re`` (ConfigDict(regex_engine="python-re")): its ``.``
    # takes ``\r`` and U+2028, its ``$`` a final newline. A config anywhere makes every
    # pattern unsaid, as for bytes.
    python_re: List[bool] = []
    # ConfigDict(validate_default=True): every default is checked against its field.
    validated_defaults: List[bool] = []

    def add(keyword: str, path: str, sentence: str, instead: str) -> None:
        at = path or "(root)"
        mistakes.append(
            {"kind": "unexportable", "keyword": keyword, "location": path, "message": f"{at}: {sentence}: {instead}"}
        )

    unsaid_by_schema = "has no JSON Schema, so vouch would not check it"

    def register(node: Any) -> None:
        # Definitions may come after their first use: collect them all first.
        todo = [node]
        while todo:
            n = todo.pop()
            if isinstance(n, dict):
                ref = n.get("ref")
                if isinstance(ref, str) and n.get("type") != "definition-ref":
                    definitions.setdefault(ref, n)
                config = n.get("config")
                if isinstance(config, dict) and config.get("val_json_bytes") in ("base64", "hex"):
                    decoded_bytes.add(str(config.get("val_json_bytes")))
                if isinstance(config, dict) and config.get("regex_engine") == "python-re":
                    python_re.append(True)
                if isinstance(config, dict) and config.get("validate_default"):
                    validated_defaults.append(True)
                todo.extend(v for k, v in n.items() if k not in ("metadata", "serialization", "function"))
            elif isinstance(n, (list, tuple)):
                todo.extend(n)

    register(core_schema)
    while stack:
        node, path = stack.pop()
        if not isinstance(node, dict):
            continue
        kind = node.get("type")
        ref = node.get("ref") if kind != "definition-ref" else node.get("schema_ref")
        if isinstance(ref, str):
            if ref in visited:
                continue
            if kind != "definition-ref":
                visited.add(ref)

        def push(child: Any, at: str) -> None:
            stack.append((child, at))

        if kind == "definition-ref":
            # The definition is walked where it is first met (recursive models end).
            target = definitions.get(str(node.get("schema_ref")))
            if target is not None:
                stack.append((target, path))
            continue
        if kind in ("function-after", "function-before", "function-wrap", "function-plain"):
            fn = _function_of(node)
            inner = node.get("schema")
            url_wrapper = (
                kind == "function-wrap"
                and isinstance(inner, dict)
                and inner.get("type") in ("url", "multi-host-url")
                and getattr(fn, "__module__", "") == "pydantic.networks"
            )
            if fn not in said and not url_wrapper:
                add(
                    "validator",
                    path,
                    f"the validator {_describe(fn)} (a field_validator, model_validator, "
                    f"AfterValidator or a type that checks with code, such as EmailStr) {unsaid_by_schema}",
                    "say it with a constraint JSON Schema has (Field(ge=…, pattern=…), Literal, an enum), "
                    "or build the contract from the schema alone, vouch.Contract(Model.model_json_schema()), "
                    "and let parse(raw, Model) run the validator after vouch",
                )
        elif kind in ("url", "multi-host-url"):
            schemes = node.get("allowed_schemes")
            rules = [k for k in ("host_required", "default_host", "default_port", "default_path") if node.get(k)]
            if rules:
                add(
                    "url",
                    path,
                    f"UrlConstraints({', '.join(rules)}) checks or changes the URL's parts {unsaid_by_schema}",
                    "JSON Schema says format uri alone, so javascript:alert(1) would pass host_required; "
                    "say the form with a Field(pattern=…), or check it after vouch",
                )
            if schemes:
                add(
                    "url",
                    path,
                    f"the URL's scheme check (one of {', '.join(map(str, schemes))}, as HttpUrl and FileUrl have) "
                    f"{unsaid_by_schema}",
                    "JSON Schema says format uri alone, so javascript:alert(1) would pass; "
                    "use AnyUrl with a Field(pattern=…) that says the scheme",
                )
        elif kind == "tagged-union" and callable(node.get("discriminator")):
            add(
                "discriminator",
                path,
                f"the discriminator function {_describe(node.get('discriminator'))} (which branch a value must match) "
                f"{unsaid_by_schema}, so a value matching another branch would pass",
                "discriminate on a field (Field(discriminator='kind')) with a Literal in each branch",
            )
        if kind in ("model", "dataclass") and node.get("post_init"):
            add(
                "validator",
                path,
                f"the model's {'model_post_init' if kind == 'model' else '__post_init__'}, which runs code on "
                f"every value and may refuse it, {unsaid_by_schema}",
                "move what it checks into constraints JSON Schema has, or check it after vouch",
            )
        if kind == "model" and isinstance(node.get("config"), dict) and node["config"].get("validate_by_name"):
            fields = (node.get("schema") or {}).get("fields") if isinstance(node.get("schema"), dict) else None
            for name, field in (fields or {}).items():
                alias = field.get("validation_alias") if isinstance(field, dict) else None
                if isinstance(alias, str) and alias != name:
                    add(
                        "alias",
                        f"{path}/{str(name).replace('~', '~0').replace('/', '~1')}",
                        f"ConfigDict(validate_by_name=True) (or populate_by_name) has Pydantic read the field "
                        f"by its name {name!r} too, where its JSON Schema names the alias {alias!r} alone, so "
                        f"{name!r} would pass unchecked",
                        "drop validate_by_name, or name the field as its alias",
                    )
        if kind in ("model", "dataclass", "typed-dict") and isinstance(node.get("config"), dict):
            config = node["config"]
            changes = [k for k in ("str_strip_whitespace", "str_to_lower", "str_to_upper") if config.get(k)]
            if changes:
                add(
                    "overwrite",
                    path,
                    f"ConfigDict({', '.join(f'{k}=True' for k in changes)}) changes every string Pydantic hands over "
                    "(and what lengths and patterns are checked on), which JSON Schema cannot say",
                    "declare a vouch repair (x-vouch: trim) in json_schema_extra instead: it is logged",
                )
        if kind == "str":
            changes = [k for k in ("strip_whitespace", "to_lower", "to_upper") if node.get(k)]
            if changes:
                add(
                    "overwrite",
                    path,
                    f"{' and '.join(changes)} changes the value Pydantic hands over (and what its length and "
                    "pattern are checked on), which JSON Schema cannot say",
                    "declare a vouch repair (x-vouch: trim) in json_schema_extra instead: it is logged",
                )
            pattern = node.get("pattern")
            if pattern is not None and not isinstance(pattern, str):
                add(
                    "pattern",
                    path,
                    f"the compiled pattern {getattr(pattern, 'pattern', pattern)!r} carries flags "
                    f"(re.X, re.I…) that its JSON Schema drops, so vouch would run another pattern",
                    "write the pattern as a string, its flags inline only where ECMA-262 has them",
                )
            elif pattern is not None and python_re:
                add(
                    "pattern",
                    path,
                    f"the pattern {pattern!r} runs in Python's re (ConfigDict(regex_engine='python-re')), whose "
                    "'.' takes \\r and U+2028 and whose '$' matches before a final newline, unlike ECMA-262's",
                    "use Pydantic's default regex engine, or check it after vouch",
                )
            construct = _regex_dialect(pattern) if isinstance(pattern, str) else None
            if construct is not None:
                add(
                    "pattern",
                    path,
                    f"the pattern {pattern!r} holds {construct}, which Pydantic's regex engine matches with Unicode "
                    "classes and vouch with ECMA-262's, so vouch could accept what the model refuses",
                    "write the class out ([ \\t\\n\\r], [^A-Za-z0-9_], [^0-9]) or check it after vouch",
                )
        elif kind == "bytes":
            lengths = [k for k in ("min_length", "max_length") if node.get(k) is not None]
            if lengths:
                add(
                    "bytes",
                    path,
                    f"{' and '.join(lengths)} on bytes count the value's bytes (the UTF-8 of the JSON string, "
                    "as Pydantic reads it), where JSON Schema's minLength and maxLength count characters, so "
                    "vouch would accept \"😀\" (one character, four bytes) under max_length=2",
                    "type it str with Field(max_length=…) in characters, or check the bytes after vouch",
                )
            for encoding in sorted(decoded_bytes):
                add(
                    "bytes",
                    path,
                    f"ConfigDict(val_json_bytes={encoding!r}) has Pydantic decode the string as {encoding}, which "
                    "the field's JSON Schema (format binary: any string) does not say, so vouch would accept "
                    "text that does not decode",
                    "type it str with a Field(pattern=…) that says the alphabet, or check it after vouch",
                )
        elif kind == "timedelta":
            add(
                "timedelta",
                path,
                "a timedelta's JSON Schema (format duration) drops its bounds (gt, le…), and Pydantic reads "
                "durations otherwise: none past the 999,999,999 days Python holds (P1000000000D would pass)",
                "type it as a number of seconds (float with Field(ge=…, le=…)), or check it after vouch",
            )
        elif kind == "complex":
            add(
                "complex",
                path,
                f"a complex number's JSON Schema is any string, and what Pydantic parses as one {unsaid_by_schema}",
                "type it as two floats (real, imag), or check it after vouch",
            )
        elif kind == "float" and isinstance(node.get("multiple_of"), (int, float)):
            step = node["multiple_of"]
            if not float(step).is_integer():
                add(
                    "multiple_of",
                    path,
                    f"Pydantic checks multiple_of={step} in binary floating point, which refuses some exact "
                    "decimal multiples (10436329.2 for 0.05), where vouch checks the decimal as written, so vouch "
                    "would accept what the model refuses",
                    "scale it to an int (cents) with multiple_of on the int, or check it after vouch",
                )
        elif kind == "literal":
            odd = [v for v in node.get("expected") or [] if isinstance(v, (bytes, enum.Enum))]
            if odd:
                add(
                    "literal",
                    path,
                    f"the literal {odd[0]!r} is no JSON value: its schema writes the raw value, which Pydantic's "
                    "strict mode refuses",
                    "write the Literal with the plain value (Literal[1], Literal['a']), or the Enum type itself",
                )
        elif kind in ("set", "frozenset"):
            items = node.get("items_schema")
            item_kind = items.get("type") if isinstance(items, dict) else None
            if item_kind in ("any", "list", "dict", "set", "model", "dataclass", "typed-dict", "definition-ref", "union"):
                add(
                    "set",
                    path,
                    f"a set of {item_kind} items: Pydantic hashes them (a list or a model cannot be, 1 and true are "
                    f"one), where JSON Schema's uniqueItems compares JSON values, so its length and members "
                    f"{unsaid_by_schema}",
                    "use a list, or a set of one plain type (str, int)",
                )
        elif kind == "default" and (node.get("validate_default") or validated_defaults):
            add(
                "default",
                path,
                "validate_default checks the default against the field, and its JSON Schema (the field "
                "optional, its default filled) does not: vouch would accept a reply without the field, which "
                "the model refuses when the default fails",
                "drop validate_default (a default the field refuses is the model's own mistake), or check after vouch",
            )
        elif kind == "decimal":
            add(
                "decimal",
                path,
                "a Decimal's JSON Schema takes any string, and drops max_digits and decimal_places, so vouch "
                "would not check them",
                "type it float (with Field(multiple_of=…)) or str with a pattern, or check it after vouch",
            )
        elif kind in ("date", "datetime", "time"):
            bounds = [k for k in ("gt", "ge", "lt", "le", "now_op") if node.get(k) is not None]
            naive = node.get("tz_constraint") not in (None, "aware")
            if bounds or naive:
                what = "a bound on the date or time (gt, le, PastDate, FutureDate…)" if bounds else "a time zone rule (NaiveDatetime, a fixed offset)"
                add("date", path, f"{what} {unsaid_by_schema}", "check it after vouch")
        elif kind == "dict":
            keys = node.get("keys_schema")
            if isinstance(keys, dict) and keys.get("type") not in (None, "str", "any"):
                add("key", path, f"the keys' type ({keys.get('type')}) {unsaid_by_schema}", "type the keys str, or check them after vouch")
            elif isinstance(keys, dict) and any(keys.get(k) is not None for k in ("pattern", "min_length", "max_length")):
                add(
                    "key",
                    path,
                    "the keys' constraints: Pydantic's JSON Schema writes a key pattern as patternProperties "
                    "without closing the other keys, so any key, with any value, would pass",
                    "type the keys str (or a Literal), or check them after vouch",
                )
            push(keys, path)
            push(node.get("values_schema"), f"{path}/*")
            continue

        # The children, with the path of the value each applies to.
        if kind == "model-fields" or kind == "typed-dict":
            push(node.get("extras_schema"), f"{path}/*")
            for name, field in reversed(list((node.get("fields") or {}).items())):
                alias = field.get("validation_alias") if isinstance(field, dict) else None
                if alias is not None and not isinstance(alias, str):
                    add(
                        "alias",
                        f"{path}/{str(name).replace('~', '~0').replace('/', '~1')}",
                        "an AliasPath or AliasChoices has Pydantic read the field from keys (or inside values) "
                        "its JSON Schema does not name",
                        "give the field one alias (a str), or check it after vouch",
                    )
                key = alias if isinstance(alias, str) else str(name)
                push(field, f"{path}/{key.replace('~', '~0').replace('/', '~1')}")
        elif kind == "dataclass-args":
            for field in reversed(node.get("fields") or []):
                if isinstance(field, dict):
                    push(field, f"{path}/{str(field.get('name')).replace('~', '~0').replace('/', '~1')}")
        elif kind in ("list", "set", "frozenset", "generator"):
            push(node.get("items_schema"), f"{path}/*")
        elif kind == "tuple":
            for i, item in reversed(list(enumerate(node.get("items_schema") or []))):
                push(item, f"{path}/{i}")
        elif kind == "union":
            for choice in node.get("choices") or []:
                push(choice[0] if isinstance(choice, tuple) else choice, path)
        elif kind == "tagged-union":
            for choice in (node.get("choices") or {}).values():
                push(choice, path)
        elif kind == "chain":
            for step in node.get("steps") or []:
                push(step, path)
        elif kind == "lax-or-strict":
            # The strict side, as parse(raw, Model) validates (the lax one coerces more).
            push(node.get("strict_schema"), path)
        elif kind == "json-or-python":
            # The reply is JSON: the Python-object side never runs on it.
            push(node.get("json_schema"), path)
        elif kind == "definitions":
            push(node.get("schema"), path)
        else:
            push(node.get("schema"), path)
    return mistakes
