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
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Union

from . import Contract, Verdict

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

__all__ = ["VERDICT_DDL", "with_verdicts", "verdict_row"]

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
            replies: List[Optional[Union[str, bytes]]] = batch.column(raw).to_pylist()
            verdicts = c.check_many(["" if r is None else r for r in replies])
            column = pa.array([verdict_row(v) for v in verdicts], type=arrow_type)
            yield pa.RecordBatch.from_arrays([*batch.columns, column], names=[*batch.schema.names, out])

    return df.mapInArrow(check, schema)
