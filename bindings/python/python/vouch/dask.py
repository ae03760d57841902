"""vouch on Dask: a verdict column for a Dask DataFrame of raw model replies.

    from vouch.dask import with_verdicts
    checked = with_verdicts(ddf, contract, raw="raw", out="verdict")

Each partition (a pandas DataFrame) is checked with ``check_many``; the
``out`` column holds one dict per row, the fields of
:data:`vouch.spark.VERDICT_DDL` (``outcome``, ``passed``, ``value`` as JSON
text, ``problems``, ``repairs``, ``findings``, and ``json``, which is
``vouch check --json``'s object). A missing reply (``None``/NaN) is checked as
an empty one: refused, ``empty_reply``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Union

from . import Contract
from .spark import _compiled, verdict_row

if TYPE_CHECKING:
    import dask.dataframe as dd
    import pandas as pd

__all__ = ["with_verdicts"]


def _reply(r: Any) -> Union[str, bytes]:
    return r if isinstance(r, (str, bytes)) else ""


def with_verdicts(
    ddf: dd.DataFrame,
    contract: Union[Contract, Dict[str, Any], str, bytes],
    raw: str = "raw",
    out: str = "verdict",
) -> dd.DataFrame:
    """``ddf`` with a verdict column ``out`` for its column ``raw``, every other
    column kept, row for row."""
    document = (contract if isinstance(contract, Contract) else Contract(contract)).document
    if raw not in ddf.columns:
        raise ValueError(f"no column {raw!r} in the DataFrame (it has {list(ddf.columns)})")
    if out in ddf.columns:
        raise ValueError(f"the DataFrame already has a column {out!r}: name the verdict column with out=")

    def check(part: pd.DataFrame) -> pd.DataFrame:
        verdicts = _compiled(document).check_many([_reply(r) for r in part[raw].tolist()])
        result = part.copy()
        result[out] = [verdict_row(v) for v in verdicts]
        return result

    meta = ddf._meta.copy()
    meta[out] = []
    meta[out] = meta[out].astype(object)
    return ddf.map_partitions(check, meta=meta)
