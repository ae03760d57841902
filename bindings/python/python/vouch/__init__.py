"""vouch: nothing a model says reaches your code unless vouch vouches for it.

A contract (JSON Schema with ``x-vouch``, or a Pydantic model) checks each
reply exactly as the model sent it and fails closed: unreadable, cut off,
missing, null or wrong-typed is *refused*, told apart from a real finding.

    >>> import vouch
    >>> plate = vouch.Contract({"type": "object", "required": ["ok"],
    ...                         "properties": {"ok": {"type": "boolean"}}})
    >>> plate.check('{"ok": true}').passed
    True
    >>> plate.check('{}').problems[0].code
    'missing'
"""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Any,
    Awaitable,
    Callable,
    List,
    Optional,
    Tuple,
    Type,
    Union,
)

from ._vouch import Contract as _NativeContract
from ._vouch import ContractError, ExportError, Finding, Problem, Repair, StreamCheck, Verdict
from ._vouch import Rounds as _Rounds

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "Contract",
    "ContractError",
    "ExportError",
    "Finding",
    "Outcome",
    "Problem",
    "Refused",
    "Repair",
    "StreamCheck",
    "Verdict",
    "rounds",
    "rounds_async",
]

#: A chat message (OpenAI's format: ``{"role": ..., "content": ...}``); typed
#: ``Any`` so a ``call`` annotated with an SDK's own message type fits.
Message = Any
Reply = Union[str, bytes, bytearray, None]


class Refused(Exception):
    """The contract refused the reply; ``verdict`` carries every problem."""

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict
        lines = [p.message for p in verdict.problems]
        super().__init__("the reply was refused: " + "; ".join(lines))


class Contract(_NativeContract):
    """A compiled contract: ``Contract(schema)`` from a dict, or JSON text
    (str or bytes). Raises :class:`ContractError` listing every mistake."""

    @classmethod
    def from_pydantic(cls, model: Type[BaseModel]) -> Contract:
        """The contract of a Pydantic model: its JSON Schema
        (``model_json_schema()``), with ``x-vouch`` declared through
        ``json_schema_extra``.

        Raises :class:`ContractError` where the model checks what that schema
        does not say (a validator, ``HttpUrl``'s schemes, a ``Decimal``…),
        each with its path: vouch would accept replies the model refuses.
        ``Contract(model.model_json_schema())`` takes the schema alone."""
        from ._pydantic import unsaid

        mistakes = unsaid(getattr(model, "__pydantic_core_schema__", None))
        if getattr(model, "model_config", {}).get("json_schema_mode_override") == "serialization":
            mistakes.insert(
                0,
                {
                    "kind": "unexportable",
                    "keyword": "json_schema_mode_override",
                    "location": "",
                    "message": "(root): ConfigDict(json_schema_mode_override='serialization') has "
                    "model_json_schema() write what the model serializes (its serialization aliases and types), "
                    "not what it validates: drop it, or build the contract from "
                    "Model.model_json_schema(mode='validation') with the override off",
                },
            )
        if mistakes:
            error = ContractError("\n".join(m["message"] for m in mistakes))
            error.mistakes = mistakes
            raise error
        return cls(model.model_json_schema())

    def __reduce__(self) -> Tuple[Any, Tuple[str]]:
        """Pickled as its document's text and compiled again when unpickled
        (``multiprocessing``, joblib, Ray, Celery): the same contract, as
        ``document`` is what compiles to it (how it travels to a Spark
        executor too)."""
        return (type(self), (self.document,))


@dataclass(frozen=True)
class Outcome:
    """How an ask ended.

    ``outcome`` is ``"accepted"`` when a model reply was accepted, else
    ``"refused"`` — also when the fallback is returned: ``source`` then says
    ``"fallback"``, and ``value`` is the last good value, not a fresh answer.
    """

    outcome: str
    #: ``"model"``, ``"fallback"``, or ``None`` when there is no value.
    source: Optional[str]
    #: The accepted reply's value, or the fallback's, or ``None``.
    value: Any
    #: A model reply was accepted with no gate finding (never for a fallback).
    passed: bool
    #: Every round's verdict, in order.
    rounds: List[Verdict]
    #: The fallback's own verdict, when one was given.
    fallback: Optional[Verdict]

    @property
    def is_fallback(self) -> bool:
        """The value is the fallback (every round was refused)."""
        return self.source == "fallback"

    @classmethod
    def _of(cls, state: _Rounds) -> Outcome:
        answer = state.answer
        return cls(
            outcome=state.outcome,
            source=state.source,
            value=None if answer is None else answer.value,
            passed=state.source == "model" and answer is not None and answer.passed,
            rounds=state.verdicts,
            fallback=state.fallback,
        )


def _fallback_json(fallback: Any) -> Optional[str]:
    if fallback is None:
        return None
    dump = getattr(fallback, "model_dump_json", None)
    if callable(dump):
        text: str = dump()
        return text
    return json.dumps(fallback, allow_nan=False)


#: The most rounds one ask may take (the core's bound).
_MAX_ROUNDS = 100


def _start(
    contract: _NativeContract, max_rounds: int, fallback: Any, messages: Optional[List[Message]]
) -> "tuple[_Rounds, List[Message]]":
    # Checked here, in the core's words: the native call takes an unsigned
    # number, and would say a negative one "can't convert" (an OverflowError).
    wanted = operator.index(max_rounds)
    if wanted < 1:
        raise ValueError(f"max_rounds must be at least 1 (got {wanted})")
    if wanted > _MAX_ROUNDS:
        raise ValueError(f"max_rounds must be at most {_MAX_ROUNDS} (got {wanted})")
    state = _Rounds(contract, wanted, _fallback_json(fallback))
    given = list(messages or [])
    if given and given[0].get("role") == "system" and isinstance(given[0].get("content"), str):
        first = dict(given[0])
        first["content"] = state.system_message(first["content"])
        return state, [first, *given[1:]]
    return state, [{"role": "system", "content": state.system_message()}, *given]


def _text(reply: Reply) -> Union[str, bytes]:
    if reply is None:
        # The model sent nothing: refused as an empty reply, a round spent.
        return ""
    if isinstance(reply, (str, bytes)):
        return reply
    if isinstance(reply, bytearray):
        # As check takes it.
        return bytes(reply)
    raise TypeError(
        f"call(messages) must return the reply's text (str, bytes, bytearray or None), not {type(reply).__name__}"
    )


def _next(state: _Rounds, convo: List[Message], reply: Reply) -> bool:
    step = state.reply(_text(reply))
    if step is None:
        return False
    assistant, user = step
    if assistant is not None:
        convo.append({"role": "assistant", "content": assistant})
    convo.append({"role": "user", "content": user})
    return True


def rounds(
    contract: _NativeContract,
    call: Callable[[List[Message]], Reply],
    max_rounds: int = 2,
    fallback: Any = None,
    *,
    messages: Optional[List[Message]] = None,
) -> Outcome:
    """Ask with your own client, check each reply, ask again in the core's
    words, then refuse and keep the last good value, marked.

    ``call(messages)`` sends the conversation (OpenAI chat format) and
    returns the reply's text: the OpenAI SDK, LiteLLM, a local model. The
    first message is the system message with the contract's instructions
    (after your own system message, if ``messages`` starts with one).
    ``fallback`` (a JSON-able value or a Pydantic model) is returned, marked
    ``source="fallback"``, when every round is refused, if it passes the
    contract itself. Never raises for a refusal; your client's errors pass
    through.
    """
    state, convo = _start(contract, max_rounds, fallback, messages)
    while _next(state, convo, call(list(convo))):
        pass
    return Outcome._of(state)


async def rounds_async(
    contract: _NativeContract,
    call: Callable[[List[Message]], Awaitable[Reply]],
    max_rounds: int = 2,
    fallback: Any = None,
    *,
    messages: Optional[List[Message]] = None,
) -> Outcome:
    """:func:`rounds` with an ``async`` ``call`` (``AsyncOpenAI``, …)."""
    state, convo = _start(contract, max_rounds, fallback, messages)
    while _next(state, convo, await call(list(convo))):
        pass
    return Outcome._of(state)
