"""Write one case file per (source, model) for the Python sources:

  pydantic    Model.model_json_schema()
  openai_py   openai.lib._pydantic.to_strict_json_schema(Model), what
              client.beta.chat.completions.parse(response_format=Model) sends
  instructor  instructor.openai_schema(Model).openai_schema["parameters"], what
              Instructor sends as the tool's parameters (Mode.TOOLS, its default)

Each case holds the schema as the tool emits it, the valid replies (each one
accepted by Model.model_validate_json, the validator all three use), and the
mutated replies with Pydantic's verdict in its default (lax) mode and strict.
"""
from __future__ import annotations

import json
import os
import sys
from importlib.metadata import version

import instructor
from openai.lib._pydantic import to_strict_json_schema
from pydantic import ValidationError

sys.path.insert(0, os.path.dirname(__file__))
from models import MODELS  # noqa: E402
from mutate import mutations  # noqa: E402

SOURCES = {
    "pydantic": ("pydantic " + version("pydantic"), lambda m: m.model_json_schema()),
    "openai_py": ("openai " + version("openai"), to_strict_json_schema),
    "instructor": ("instructor " + version("instructor"), lambda m: instructor.openai_schema(m).openai_schema["parameters"]),
}


def accepts(model, text, strict):
    try:
        model.model_validate_json(text, strict=strict)
        return True
    except ValidationError:
        return False


def main(out):
    for source, (tool, emit) in SOURCES.items():
        os.makedirs(os.path.join(out, source), exist_ok=True)
        for name, model, valid in MODELS:
            case = {"source": source, "model": name, "tool": tool}
            try:
                case["schema"] = emit(model)
            except Exception as e:  # the tool itself refuses the model
                case["schema"] = None
                case["tool_error"] = f"{type(e).__name__}: {e}"
            texts = [json.dumps(v) for v in valid]
            for t in texts:
                if not accepts(model, t, None):
                    sys.exit(f"{source}/{name}: Pydantic refuses the valid reply {t}")
            case["valid"] = [{"reply": t, "tool_strict": accepts(model, t, True)} for t in texts]
            muts = mutations(valid)
            for m in muts:
                m["tool"] = accepts(model, m["reply"], None)
                m["tool_strict"] = accepts(model, m["reply"], True)
            case["mutations"] = muts
            with open(os.path.join(out, source, name + ".json"), "w") as f:
                json.dump(case, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
