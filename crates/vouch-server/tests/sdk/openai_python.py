"""The official OpenAI Python SDK as a client of `vouch serve`.

Run by crates/vouch-server/tests/sdk.rs as

    python openai_python.py <scenario>[=<base url>]...

with a client token in VOUCH_TOKEN. Each scenario runs against its own
gateway: the base URL (ending in /v1) given after `=`, else VOUCH_BASE_URL.
One process runs them all (importing the SDK is most of the time). Prints
one JSON line per scenario of what the SDK gave back; the Rust test asserts
on it. A scenario whose SDK call goes some unexpected way prints its
traceback as `unexpected` (and the script exits non-zero at the end).

max_retries=0 everywhere: the SDK retries 408/409/429/5xx on its own by
default, which would make the upstream's request count depend on the SDK.
"""

import json
import os
import sys
import traceback

import openai
import pydantic
from openai import OpenAI

MESSAGES = [{"role": "user", "content": "Read back the plate."}]
MODEL = "fake-model"
PLATE_FORMAT = {"type": "json_schema", "json_schema": {"name": "plate", "schema": {}}}


BASE_URL = os.environ.get("VOUCH_BASE_URL", "")


def client() -> OpenAI:
    return OpenAI(
        base_url=BASE_URL,
        api_key=os.environ["VOUCH_TOKEN"],
        max_retries=0,
        timeout=10.0,
    )


def versions() -> dict:
    return {"openai": openai.__version__, "pydantic": pydantic.VERSION}


def error_seen(e: openai.APIError) -> dict:
    """What an SDK error lets its caller read."""
    body = e.body if isinstance(e.body, dict) else {}
    response = getattr(e, "response", None)
    return {
        "class": type(e).__name__,
        "is_api_error": isinstance(e, openai.APIError),
        "is_unprocessable": isinstance(e, openai.UnprocessableEntityError),
        "status": getattr(e, "status_code", None),
        "code": e.code,
        "type": e.type,
        "message": e.message,
        "problems": [p.get("code") for p in body.get("problems") or []],
        "error_class": body.get("class"),
        "contract": body.get("contract"),
        "outcome_header": response.headers.get("x-vouch-outcome") if response is not None else None,
    }


def accepted() -> dict:
    completion = client().chat.completions.create(model=MODEL, messages=MESSAGES, response_format=PLATE_FORMAT)
    content = completion.choices[0].message.content
    return {
        "content": json.loads(content),
        "finish_reason": completion.choices[0].finish_reason,
        # The extra field, both ways the SDK keeps it.
        "vouch": (completion.model_extra or {}).get("vouch"),
        "vouch_in_to_dict": completion.to_dict().get("vouch"),
        "usage_total": completion.usage.total_tokens if completion.usage else None,
    }


def refused() -> dict:
    try:
        completion = client().chat.completions.create(model=MODEL, messages=MESSAGES, response_format=PLATE_FORMAT)
    except openai.APIError as e:
        return {"raised": True, **error_seen(e)}
    return {"raised": False, "content": completion.choices[0].message.content}


def helper_stream(c: OpenAI) -> dict:
    """`client.chat.completions.stream(...)`: the helper that accumulates."""
    deltas, vouch, content_done = [], None, None
    try:
        with c.chat.completions.stream(model=MODEL, messages=MESSAGES, response_format=PLATE_FORMAT) as stream:
            for event in stream:
                if event.type == "content.delta":
                    deltas.append(event.delta)
                elif event.type == "content.done":
                    content_done = event.content
                elif event.type == "chunk" and (event.chunk.model_extra or {}).get("vouch") is not None:
                    vouch = event.chunk.model_extra["vouch"]
            final = stream.get_final_completion()
    except openai.APIError as e:
        return {"raised": True, "content": "".join(deltas), "error": error_seen(e)}
    return {
        "raised": False,
        "content": "".join(deltas),
        "final_content": final.choices[0].message.content,
        "finish_reason": final.choices[0].finish_reason,
        "content_done": content_done,
        "vouch": vouch,
        "final_vouch": (final.model_extra or {}).get("vouch"),
    }


def create_stream(c: OpenAI) -> dict:
    """`create(stream=True)`: the plain iterator of chunks."""
    deltas, vouch, finish = [], None, None
    try:
        for chunk in c.chat.completions.create(
            model=MODEL, messages=MESSAGES, response_format=PLATE_FORMAT, stream=True
        ):
            if chunk.choices:
                if chunk.choices[0].delta.content:
                    deltas.append(chunk.choices[0].delta.content)
                finish = chunk.choices[0].finish_reason or finish
            if (chunk.model_extra or {}).get("vouch") is not None:
                vouch = chunk.model_extra["vouch"]
    except openai.APIError as e:
        return {"raised": True, "content": "".join(deltas), "error": error_seen(e)}
    return {"raised": False, "content": "".join(deltas), "finish_reason": finish, "vouch": vouch}


def stream_accepted() -> dict:
    c = client()
    return {"helper": helper_stream(c), "create": create_stream(c)}


def stream_refused() -> dict:
    c = client()
    return {"helper": helper_stream(c), "create": create_stream(c)}


class PlateModel(pydantic.BaseModel):
    productPresent: bool
    productTextPresent: bool
    garbledText: bool


def parse() -> dict:
    completion = client().chat.completions.parse(model=MODEL, messages=MESSAGES, response_format=PlateModel)
    parsed = completion.choices[0].message.parsed
    return {
        "parsed_class": type(parsed).__name__,
        "is_model": isinstance(parsed, PlateModel),
        "parsed": parsed.model_dump() if parsed is not None else None,
        "vouch": (completion.model_extra or {}).get("vouch"),
    }


def parse_stream() -> dict:
    """The stream helper with the Pydantic model: parsed on content.done and
    in the final completion."""
    done_parsed, deltas = None, []
    with client().chat.completions.stream(model=MODEL, messages=MESSAGES, response_format=PlateModel) as stream:
        for event in stream:
            if event.type == "content.delta":
                deltas.append(event.delta)
            elif event.type == "content.done":
                done_parsed = event.parsed
        final = stream.get_final_completion()
    parsed = final.choices[0].message.parsed
    return {
        "content": "".join(deltas),
        "done_is_model": isinstance(done_parsed, PlateModel),
        "is_model": isinstance(parsed, PlateModel),
        "parsed_class": type(parsed).__name__,
        "parsed": parsed.model_dump() if parsed is not None else None,
    }


SCENARIOS = {
    "accepted": accepted,
    "refused": refused,
    "stream_accepted": stream_accepted,
    "stream_refused": stream_refused,
    "parse": parse,
    "parse_stream": parse_stream,
}

if __name__ == "__main__":
    failed = False
    for arg in sys.argv[1:]:
        name, _, url = arg.partition("=")
        BASE_URL = url or os.environ.get("VOUCH_BASE_URL", "")
        try:
            seen = SCENARIOS[name]()
        except Exception:  # pylint: disable=broad-except
            failed = True
            seen = {"unexpected": traceback.format_exc()}
        print(json.dumps({"scenario": name, "versions": versions(), **seen}), flush=True)
    sys.exit(1 if failed else 0)
