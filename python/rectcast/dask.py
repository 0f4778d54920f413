"""The queries over a Dask DataFrame of segments, partition by partition, on every worker.

The segments are a ``dask.dataframe.DataFrame`` with numeric columns ``x0, y0, x1, y1`` (others
are ignored; float32 as it is, other numbers converted exactly or refused, as ``rectcast``'s
``rounding=`` says: the columns are checked when the graph is made, the values in the workers), for example ``dd.read_parquet("trajectories/")``;
or a dask-geopandas GeoDataFrame of line strings (``dask_geopandas.read_parquet("roads/")``),
each line its segments, its rows naming their ``line`` (the row's index label) and
``line_segment`` as ``rectcast``'s do. The rects (or walls, circles or polygons, as keywords;
polygons from a GeoDataFrame carry its index as ``polygon_index``) are converted once and sent
to each worker once. ``segment`` in the results is the segment's position in the whole
DataFrame, counted over the partitions in order, so the rows equal those of the
single-process call on the concatenated segments, whatever the partitioning.

Each worker thread keeps one engine (``backend="auto"`` uses the worker's GPU when it has one).
``threads`` is the CPU backend's threads per task: 1 by default, since Dask already runs one
task per worker thread.

The same per-partition functions (``first_hit_frame`` and co.) plug into other engines that
hand out batches: Ray Data's ``map_batches`` and Spark's ``mapInArrow`` (see python/README.md).
"""

from __future__ import annotations

import operator
import threading

import numpy as np
import pandas as pd

import rectcast
from rectcast import geometry as _geometry

__all__ = ["first_hit", "hits", "counts", "first_hit_frame", "hits_frame", "counts_array"]

_local = threading.local()


def _engine(backend: str, threads: int) -> rectcast.Engine:
    """This thread's engine for (backend, threads), made on first use and kept."""
    engines = getattr(_local, "engines", None)
    if engines is None:
        engines = _local.engines = {}
    key = (backend, threads)
    if key not in engines:
        engines[key] = rectcast.Engine(backend, threads)
    return engines[key]


def _check_columns(columns, dtypes) -> None:
    """The segment columns are there and numeric: checked on the Dask DataFrame's metadata,
    before the graph runs, so a mistake fails at the call rather than inside a worker."""
    columns = list(map(str, columns))
    missing = [c for c in rectcast.SEGMENT_COLUMNS if c not in columns]
    if missing:
        raise ValueError(
            f"segments: no column {missing[0]}: expected columns {','.join(rectcast.SEGMENT_COLUMNS)} "
            f"(in any order; others are ignored), found {','.join(columns)}"
        )
    for c in rectcast.SEGMENT_COLUMNS:
        if not pd.api.types.is_numeric_dtype(dtypes[c]) or pd.api.types.is_bool_dtype(dtypes[c]):
            raise TypeError(f"segments: column {c} is {dtypes[c]}, expected numbers")


def _to_target(query, rects, rounding, frame, origin):
    """The per-batch functions' ``rects``: a rects array, ``{"rects" | "walls" | "circles" |
    "polygons": ...}`` (one or several), or a target the Dask functions made, as a
    ``rectcast._Target`` (``rectcast._Mixed`` for several); ``origin`` as ``rectcast``'s, for
    segments like ``frame``."""
    if isinstance(rects, (rectcast._Target, rectcast._Mixed)):
        return rects
    if isinstance(rects, dict):
        polygons = rects.get("polygons")
        shapes = {k: v for k, v in rects.items() if k not in ("rects", "polygons")}
        return _target(query, frame, rects.get("rects"), polygons, shapes, rounding, origin)
    return _target(query, frame, rects, None, {}, rounding, origin)


def _target(query, segments, rects, polygons, shapes, rounding, origin, to="frame", skip_invalid=False):
    """The targets (one kind, or several asked as one scene), converted once, in the frame
    ``origin`` gives for segments like ``segments`` (a partition, or the Dask frame's meta):
    every worker shifts its segments by the same origin, so the rows are those of one call
    over all of them."""
    given = rectcast._given_targets(query, rects, polygons, shapes)
    origin = rectcast._origin(origin, segments, *given.values())
    if len(given) > 1:
        return rectcast._Mixed(query, given, None, rounding, to, origin, skip_invalid)
    return rectcast._Target(query, rects, polygons, shapes, None, rounding, to, origin, skip_invalid)


def _is_lines(frame) -> bool:
    """Whether a partition (or a Dask frame's meta) holds line strings, a GeoDataFrame's, rather
    than x0, y0, x1, y1 columns."""
    return _geometry.is_geometry(frame)


def _rows(frame, target, offset, query, to, ids, backend, threads, rounding):
    """``query`` of one batch of segments against ``target``, its rows as ``to`` asks, their
    ``segment`` counted from ``offset``; and the batch's number of segments."""
    if not _is_lines(frame):
        _check_columns(frame.columns, frame.dtypes)
    crs = rectcast._crs(("segments", frame), (target.keyword, target))
    moved = []
    segments, joined = rectcast._segments(frame, ids, None, rounding, target.origin, moved)
    out = _engine(backend, threads)._rows_of(query, segments, joined, crs, target, to, moved)
    return _shifted(out, offset), len(segments)


def _shifted(rows, offset):
    """The rows with their ``segment`` counted from ``offset``."""
    if offset:
        rows = rows.copy(deep=False)  # a task's result is not changed in place
        values = rows["segment"].to_numpy()
        rows["segment"] = values + values.dtype.type(offset)  # in its own dtype, int64 or uint64
    return rows


def first_hit_frame(
    frame: pd.DataFrame, rects, offset: int = 0, backend: str = "auto", threads: int = 1, rounding: str = "exact",
    origin="auto",
):
    """First hits of one batch of segments as a pandas DataFrame; ``segment`` counts from
    ``offset``. ``rects``: a rects array, or ``{"walls" | "circles" | "polygons": ...}``."""
    target = _to_target("first_hit", rects, rounding, frame, origin)
    return _rows(frame, target, offset, "first_hit", "frame", None, backend, threads, rounding)[0]


def hits_frame(
    frame: pd.DataFrame, rects, offset: int = 0, backend: str = "auto", threads: int = 1, rounding: str = "exact",
    origin="auto",
):
    """Hitting pairs of one batch of segments as a pandas DataFrame; ``segment`` counts from
    ``offset``. ``rects`` as for ``first_hit_frame``."""
    target = _to_target("hits", rects, rounding, frame, origin)
    return _rows(frame, target, offset, "hits", "frame", None, backend, threads, rounding)[0]


def counts_array(
    frame: pd.DataFrame, rects, backend: str = "auto", threads: int = 1, rounding: str = "exact", origin="auto",
) -> np.ndarray:
    """Hits per rect (or shape) of one batch of segments (uint64, one per shape)."""
    if not _is_lines(frame):
        _check_columns(frame.columns, frame.dtypes)
    target = _to_target("counts", rects, rounding, frame, origin)
    return _engine(backend, threads)._run("counts", frame, target, "numpy", None, rounding, None)["hits"]


#: What the Dask functions' ``to=`` takes.
OUTPUTS = ("frame", "pandas", "geopandas")


def _checked(ddf, to) -> None:
    """The segments' columns (or geometry) and ``to``, checked on the Dask DataFrame's metadata
    before the graph runs, so a mistake fails at the call rather than inside a worker."""
    if to not in OUTPUTS:
        raise ValueError(f'to: expected "frame", "pandas" or "geopandas", found {to!r}')
    if to == "geopandas":
        try:
            import dask_geopandas  # noqa: F401  (registers GeoDataFrame partitions with Dask)
        except ImportError as e:
            raise ImportError('to="geopandas" needs dask-geopandas: pip install dask-geopandas') from e
    if not _is_lines(ddf._meta):
        _check_columns(ddf.columns, ddf.dtypes)


def _per_partition(ddf, target, query, to, ids, backend, threads, rounding):
    """The query over every partition, in one pass over the data: each partition's task gives
    its rows (``segment`` counted from 0) and its number of segments; a chain of small tasks
    sums those into each partition's offset, and each partition's rows are shifted by it."""
    import dask
    import dask.dataframe as dd

    shared = dask.delayed(target, pure=True)  # one key: each worker fetches the target once
    # The empty result of an empty partition: every partition's columns and dtypes.
    meta = _rows(ddf._meta, target, 0, query, to, ids, "cpu", 1, rounding)[0]

    def run(frame, target):
        return _rows(frame, target, 0, query, to, ids, backend, threads, rounding)

    parts, offset = [], 0
    for partition in ddf.to_delayed():
        rows, count = dask.delayed(run, nout=2)(partition, shared)
        parts.append(dask.delayed(_shifted)(rows, offset))
        offset = dask.delayed(operator.add)(offset, count)
    return dd.from_delayed(parts, meta=meta, verify_meta=False)


_QUERY_OPTIONS = """
    ``to``: ``"frame"`` (the rows ``rectcast`` gives as numpy, as a DataFrame: -1 and NaN on a
    miss), ``"pandas"`` (``rectcast``'s pandas rows: categorical kinds, nullable indices) or
    ``"geopandas"`` (GeoDataFrame partitions, each row's geometry the part of its segment
    hit: a dask-geopandas GeoDataFrame). ``ids``: the segments' columns carried into the rows
    by segment (``rectcast``'s ``ids=``: a column name or names). ``origin``: as
    ``rectcast``'s; ``"auto"`` takes it from the targets, so every partition is shifted alike.
    ``skip_invalid``: as ``rectcast``'s (each partition says what it skipped)."""


def first_hit(
    ddf, rects=None, *, polygons=None, backend: str = "auto", threads: int = 1, rounding: str = "exact",
    to: str = "frame", ids=None, origin="auto", skip_invalid: bool = False, **shapes,
):
    """Each segment's first hit, as a lazy Dask DataFrame (one row per segment, in order).
    Against rects, or a registered shape (``rectcast.SHAPES``: ``walls=``, ``circles=``) or
    polygons (``rectcast.first_hit``'s forms, a GeoDataFrame's included), or any mix of them
    at once (``rectcast.first_hit``'s rows over several kinds)."""
    _checked(ddf, to)
    target = _target("first_hit", ddf._meta, rects, polygons, shapes, rounding, origin, to, skip_invalid)
    return _per_partition(ddf, target, "first_hit", to, ids, backend, threads, rounding)


def hits(
    ddf, rects=None, *, polygons=None, backend: str = "auto", threads: int = 1, rounding: str = "exact",
    to: str = "frame", ids=None, origin="auto", skip_invalid: bool = False, **shapes,
):
    """The hitting pairs in (segment, shape) order, as a lazy Dask DataFrame."""
    _checked(ddf, to)
    target = _target("hits", ddf._meta, rects, polygons, shapes, rounding, origin, to, skip_invalid)
    return _per_partition(ddf, target, "hits", to, ids, backend, threads, rounding)


# (No docstrings under python -OO.)
first_hit.__doc__ = (first_hit.__doc__ or "") + _QUERY_OPTIONS
hits.__doc__ = (hits.__doc__ or "") + _QUERY_OPTIONS


def counts(
    ddf, rects=None, *, polygons=None, backend: str = "auto", threads: int = 1, rounding: str = "exact",
    origin="auto", skip_invalid: bool = False, **shapes,
) -> np.ndarray:
    """Hits per rect (or shape) over the whole DataFrame, summed across partitions (computed
    now): a structured array (rect, hits) like ``rectcast.counts``."""
    import dask

    _checked(ddf, "frame")
    target = _target("counts", ddf._meta, rects, polygons, shapes, rounding, origin, "frame", skip_invalid)
    shared = dask.delayed(target, pure=True)
    parts = [dask.delayed(counts_array)(p, shared, backend, threads, rounding) for p in ddf.to_delayed()]
    total = dask.delayed(lambda arrays: np.sum(arrays, axis=0, dtype=np.uint64))(parts)
    # The table of no segments: every shape, with its fields, and no hits yet.
    none = np.zeros((0, 4), np.float32)
    out = rectcast.Engine("cpu", 1)._run("counts", none, target, "numpy", None, rounding, None)
    if parts:
        out["hits"] = total.compute()
    return out
