"""The founding plate gate through `vouch serve`, with the official OpenAI
Python SDK as the client and a real small model behind the gateway.

Run by crates/vouch-server/tests/realmodel.rs with VOUCH_BASE_URL (the
gateway, ending in /v1) and VOUCH_TOKEN. Prints one JSON line per prompt:
the outcome the SDK saw, the content (when accepted) or the refusal's code
and problem codes.
"""

import json
import os

import openai
from openai import OpenAI

PROMPTS = [
    "A photo shows a clean white plate with nothing on it: no product, no text. Read it back.",
    "The photo shows a plate with a yoghurt pot still on it, label readable. Read it back.",
    "The photo shows a plate with smeared, unreadable printing on it. Read it back.",
]

# json_schema: the contract named in response_format. json_object: named by the
# x-vouch-contract header instead, as a client that only knows JSON mode would.
# Either way the gateway sends the contract's own response_format upstream,
# which llama-server turns into a grammar.
MODES = {
    "json_schema": ({"type": "json_schema", "json_schema": {"name": "plate", "schema": {}}}, {}),
    "json_object": ({"type": "json_object"}, {"x-vouch-contract": "plate"}),
}

client = OpenAI(base_url=os.environ["VOUCH_BASE_URL"], api_key=os.environ["VOUCH_TOKEN"], max_retries=0, timeout=300.0)


def ask(prompt, response_format, headers, stream):
    """The content and the vouch object the SDK handed over (raises on a refusal)."""
    request = {
        "model": "smollm2",
        "messages": [{"role": "user", "content": prompt}],
        "response_format": response_format,
        "extra_headers": headers,
        "temperature": 0,
        "max_tokens": 200,
    }
    if not stream:
        r = client.chat.completions.create(**request)
        return r.choices[0].message.content, (r.model_extra or {}).get("vouch")
    content, last = "", None
    for chunk in client.chat.completions.create(**request, stream=True):
        if chunk.choices and chunk.choices[0].delta.content:
            content += chunk.choices[0].delta.content
        last = chunk
    return content, (last.model_extra or {}).get("vouch") if last is not None else None


for mode, (response_format, headers) in MODES.items():
    for prompt in PROMPTS:
        for stream in (False, True):
            seen = {"mode": mode, "prompt": prompt, "stream": stream}
            try:
                seen["content"], seen["vouch"] = ask(prompt, response_format, headers, stream)
                seen["outcome"] = "accepted"
            except openai.APIError as e:
                body = e.body if isinstance(e.body, dict) else {}
                seen["outcome"] = "refused"
                seen["status"] = getattr(e, "status_code", None)
                seen["code"] = e.code
                seen["problems"] = [p.get("code") for p in body.get("problems", [])]
            print(json.dumps(seen), flush=True)
