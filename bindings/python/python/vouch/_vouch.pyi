"""The native half of vouch (Rust, over vouch-bind)."""

from typing import Any, Dict, Iterable, List, Optional, Tuple, Type, TypeVar, Union, overload

M = TypeVar("M")

class ContractError(ValueError):
    """The contract does not compile."""

    #: Every mistake: ``{"kind", "keyword", "location", "message"}``.
    mistakes: List[Dict[str, str]]

class ExportError(ValueError):
    """The provider cannot express the contract without weakening it."""

class Problem:
    """One reason a reply was refused."""

    @property
    def code(self) -> str: ...
    @property
    def class_(self) -> str:
        """``"no_answer"`` (the model did not answer) or ``"bad_answer"``."""
    @property
    def path(self) -> str: ...
    @property
    def expected(self) -> str: ...
    @property
    def got(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def position(self) -> Optional[Tuple[int, int, int]]:
        """``(line, column, offset)`` in the raw reply, for reading problems."""
    def to_dict(self) -> Dict[str, Any]: ...

class Repair:
    """A change a declared repair rule made."""

    @property
    def path(self) -> str: ...
    @property
    def rule(self) -> str: ...
    @property
    def before(self) -> Any: ...
    @property
    def after(self) -> Any: ...
    @property
    def message(self) -> str: ...

class Finding:
    """A gate finding: the model answered, and its answer is a real problem."""

    @property
    def path(self) -> str: ...
    @property
    def message(self) -> str: ...

class Verdict:
    """The contract's verdict on one reply. Has no truth value: test
    ``passed`` or ``accepted``."""

    @property
    def outcome(self) -> str:
        """``"accepted"`` or ``"refused"``."""
    @property
    def passed(self) -> bool:
        """Accepted with no gate finding."""
    @property
    def accepted(self) -> bool: ...
    @property
    def _held_as_sent(self) -> bool:
        """Test hook, not API: decided and built in one walk."""
    @property
    def _held_unreported(self) -> bool:
        """Test hook, not API: refused, the report not yet written."""
    @property
    def _value_built(self) -> bool:
        """Test hook, not API: the value is built already."""
    @property
    def value(self) -> Any:
        """The vouched value as Python objects; ``None`` when refused."""
    @property
    def json(self) -> Optional[str]:
        """The accepted value as compact JSON text; ``None`` when refused."""
    @property
    def problems(self) -> List[Problem]: ...
    @property
    def repairs(self) -> List[Repair]: ...
    @property
    def findings(self) -> List[Finding]: ...
    def reask(self) -> Optional[str]:
        """The user message vouch asks again with after this refusal."""
    def to_json(self) -> str:
        """``vouch check --json``'s object, byte for byte."""

class StreamCheck:
    """A reply checked while it streams."""

    def feed(self, piece: Union[str, bytes]) -> str:
        """``"pending"`` while some completion could be accepted, ``"refused"`` once none can."""
    @property
    def progress(self) -> str: ...
    @property
    def problems(self) -> List[Problem]: ...
    @property
    def decided_at(self) -> Optional[int]: ...
    @property
    def received(self) -> int: ...
    @property
    def partial(self) -> Any:
        """The value so far, for a display; never a vouched value."""
    def finish(self) -> Verdict:
        """``check``'s verdict on everything fed; the check then starts again."""

class Contract:
    """A compiled contract."""

    def __init__(self, schema: Union[Dict[str, Any], bool, str, bytes]) -> None:
        """A dict (str keys, finite numbers), a boolean schema, or JSON text (str or bytes)."""
    def check(self, raw: Union[str, bytes], *, value: bool = False) -> Verdict:
        """Check one reply (the GIL released from 2,048 bytes on; the value
        built on first access). ``value=True``: the value built in the
        check's own walk where the contract accepts the reply exactly as
        sent, the GIL held. A refusal's problems are written when first read.
        """
    @overload
    def parse(self, raw: Union[str, bytes]) -> Any:
        """The vouched value, or :class:`vouch.Refused`; built in the check's
        own walk where the contract accepts the reply exactly as sent."""
    @overload
    def parse(self, raw: Union[str, bytes], model: Type[M]) -> M:
        """``model`` built from the vouched JSON in Pydantic's strict mode, or
        :class:`vouch.Refused`."""
    def check_many(self, raws: Iterable[Union[str, bytes]], *, value: bool = False) -> List[Verdict]:
        """Every reply's verdict, in order, checked across all cores; with
        ``value=True`` each accepted value is built while the pool checks the
        next replies."""
    def stream(self) -> StreamCheck: ...
    def prompt(self) -> str: ...
    def schema(self, provider: str = "openai", name: Optional[str] = None) -> Dict[str, Any]: ...
    @property
    def document(self) -> str:
        """The contract's document as compact JSON text."""
    @property
    def unknown_keywords(self) -> List[Tuple[str, str]]: ...

class Rounds:
    """One ask's rounds (driven by ``vouch.rounds``)."""

    def __init__(self, contract: Contract, max_rounds: int, fallback: Optional[Union[str, bytes]] = None) -> None: ...
    def system_message(self, callers_own: Optional[str] = None) -> str: ...
    def reply(self, raw: Union[str, bytes]) -> Optional[Tuple[Optional[str], str]]: ...
    @property
    def outcome(self) -> str: ...
    @property
    def source(self) -> Optional[str]: ...
    @property
    def verdicts(self) -> List[Verdict]: ...
    @property
    def fallback(self) -> Optional[Verdict]: ...
    @property
    def answer(self) -> Optional[Verdict]: ...

_TextColumn = Tuple[Optional[bytes], bytes, bytes, int]

def _verdict_columns(
    verdicts: Iterable[Verdict],
) -> Tuple[
    _TextColumn,
    List[bool],
    _TextColumn,
    _TextColumn,
    Tuple[List[int], _TextColumn, _TextColumn, _TextColumn, _TextColumn, _TextColumn, _TextColumn],
    Tuple[List[int], _TextColumn, _TextColumn],
    List[int],
]:
    """Many verdicts' fields as columns, each text column in Arrow's layout
    (validity bitmap or None, 64-bit offsets, data, null count), for
    ``vouch.spark.verdict_array``; not API."""
