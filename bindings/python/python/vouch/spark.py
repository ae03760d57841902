"""vouch on Spark: a verdict column for a DataFrame of raw model replies.

    from vouch.spark import with_verdicts
    checked = with_verdicts(df, contract, raw="raw", out="verdict")
    checked.filter("verdict.passed").select("id", "verdict.value")

The contract travels to the executors as its document's text and is
compiled once per executor process; each Arrow batch (``mapInArrow``) is
checked with ``check_many`` (all the executor's cores, the GIL released).
A null reply is checked as an empty one: refused, ``empty_reply`` — the
model did not answer.
"""

from __future__ import annotations

import json
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from . import Contract, Verdict
from ._vouch import _verdict_columns

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

__all__ = ["VERDICT_DDL", "with_verdicts", "verdict_row", "verdict_array"]

#: The verdict column's type, in Spark's DDL. ``value`` is the accepted value as
#: JSON text (``null`` when refused); ``json`` is ``vouch check --json``'s object,
#: byte for byte, which is also ``vouch batch``'s ``verdict``.
VERDICT_DDL = (
    "struct<outcome:string,passed:boolean,value:string,"
    "problems:array<struct<code:string,class:string,path:string,expected:string,got:string,message:string>>,"
    "repairs:array<struct<path:string,rule:string,before:string,after:string,message:string>>,"
    "findings:array<struct<path:string,message:string>>,"
    "json:string>"
)

_COMPILED: Dict[str, Contract] = {}


def _compiled(document: str) -> Contract:
    # Once per executor process (a Python worker is reused across tasks).
    c = _COMPILED.get(document)
    if c is None:
        c = _COMPILED[document] = Contract(document)
    return c


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def verdict_row(verdict: Verdict) -> Dict[str, Any]:
    """One verdict as a row of :data:`VERDICT_DDL`."""
    return {
        "outcome": verdict.outcome,
        "passed": verdict.passed,
        "value": verdict.json,
        "problems": [
            {"code": p.code, "class": p.class_, "path": p.path, "expected": p.expected, "got": p.got, "message": p.message}
            for p in verdict.problems
        ],
        "repairs": [
            {"path": r.path, "rule": r.rule, "before": _text(r.before), "after": _text(r.after), "message": r.message}
            for r in verdict.repairs
        ],
        "findings": [{"path": f.path, "message": f.message} for f in verdict.findings],
        "json": verdict.to_json(),
    }


_PROBLEM_FIELDS = ("code", "class", "path", "expected", "got", "message")
_REPAIR_FIELDS = ("path", "rule", "before", "after", "message")
_FINDING_FIELDS = ("path", "message")


def verdict_array(verdicts: Sequence[Verdict], arrow_type: Optional[pa.DataType] = None) -> pa.StructArray:
    """The verdicts as one Arrow struct array of :data:`VERDICT_DDL`'s fields,
    row for row what :func:`verdict_row` gives, built column by column: the
    fields read in one native walk, each text column handed over in Arrow's
    own layout (offsets and UTF-8 data, no object per value), where a dict
    per row and Arrow's reading of nested dicts cost several times the check
    itself. ``arrow_type``: the struct type to cast to (Spark's, in
    :func:`with_verdicts`)."""
    import pyarrow as pa

    verdicts = list(verdicts)
    outcome, passed, value, whole, problems, findings, repaired = _verdict_columns(verdicts)

    def text(column: Tuple[Optional[bytes], bytes, bytes, int]) -> pa.Array:
        valid, offsets, data, nulls = column
        count = len(offsets) // 8 - 1
        buffers = [None if valid is None else pa.py_buffer(valid), pa.py_buffer(offsets), pa.py_buffer(data)]
        # 64-bit offsets, then Spark's string (a column past 2 GiB fails the cast, loudly).
        return pa.Array.from_buffers(pa.large_string(), count, buffers, null_count=nulls).cast(pa.string())

    def listed(ends: Sequence[int], names: Sequence[str], columns: Sequence[pa.Array]) -> pa.ListArray:
        return pa.ListArray.from_arrays(pa.array(ends, pa.int32()), pa.StructArray.from_arrays(columns, names=names))

    p_ends, code, class_, path, expected, got, message = problems
    f_ends, f_path, f_message = findings
    # Repairs are few: their before and after written by Python's json, as verdict_row writes them.
    r_columns: Dict[str, List[str]] = {k: [] for k in _REPAIR_FIELDS}
    r_counts = [0] * len(verdicts)
    for i in repaired:
        made = verdicts[i].repairs
        for r in made:
            for k, x in zip(_REPAIR_FIELDS, (r.path, r.rule, _text(r.before), _text(r.after), r.message)):
                r_columns[k].append(x)
        r_counts[i] = len(made)
    r_ends = [0, *accumulate(r_counts)]
    array = pa.StructArray.from_arrays(
        [
            text(outcome),
            pa.array(passed, pa.bool_()),
            text(value),
            listed(p_ends, _PROBLEM_FIELDS, [text(c) for c in (code, class_, path, expected, got, message)]),
            listed(r_ends, _REPAIR_FIELDS, [pa.array(r_columns[k], pa.string()) for k in _REPAIR_FIELDS]),
            listed(f_ends, _FINDING_FIELDS, [text(f_path), text(f_message)]),
            text(whole),
        ],
        names=["outcome", "passed", "value", "problems", "repairs", "findings", "json"],
    )
    return array if arrow_type is None else array.cast(arrow_type)


def _replies(column: pa.Array) -> List[Union[str, bytes]]:
    """A batch's replies for ``check_many``: a string column read as its
    UTF-8 bytes (Arrow holds them so; no ``str`` made, and none encoded back
    under the GIL), a null as an empty reply."""
    import pyarrow as pa

    if pa.types.is_string(column.type):
        column = column.cast(pa.binary())
    elif pa.types.is_large_string(column.type):
        column = column.cast(pa.large_binary())
    return [b"" if r is None else r for r in column.to_pylist()]


def with_verdicts(
    df: DataFrame,
    contract: Union[Contract, Dict[str, Any], str, bytes],
    raw: str = "raw",
    out: str = "verdict",
) -> DataFrame:
    """``df`` with a verdict column ``out`` (:data:`VERDICT_DDL`) for its
    string or binary column ``raw``, every other column kept, row for row."""
    import pyarrow as pa
    from pyspark.sql.types import StructField, StructType, _parse_datatype_string

    document = (contract if isinstance(contract, Contract) else Contract(contract)).document
    if raw not in df.columns:
        raise ValueError(f"no column {raw!r} in the DataFrame (it has {df.columns})")
    if out in df.columns:
        raise ValueError(f"the DataFrame already has a column {out!r}: name the verdict column with out=")
    verdict_type = _parse_datatype_string(VERDICT_DDL)
    schema = StructType([*df.schema.fields, StructField(out, verdict_type, nullable=False)])

    def check(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark.sql.pandas.types import to_arrow_type

        c = _compiled(document)
        arrow_type = to_arrow_type(verdict_type)
        for batch in batches:
            column = verdict_array(c.check_many(_replies(batch.column(raw))), arrow_type)
            yield pa.RecordBatch.from_arrays([*batch.columns, column], names=[*batch.schema.names, out])

    return df.mapInArrow(check, schema)
