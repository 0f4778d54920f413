"""The queries over a Dask DataFrame of segments, partition by partition, on every worker.

The segments are a ``dask.dataframe.DataFrame`` with numeric columns ``x0, y0, x1, y1`` (others
are ignored; float32 as it is, other numbers converted exactly or refused, as ``rectcast``'s
``rounding=`` says: the columns are checked when the graph is made, the values in the workers), for example ``dd.read_parquet("trajectories/")``; the rects (or walls, circles
or polygons, as keywords) are held in memory and sent to each worker once. ``segment`` in the results is the
row's position in the whole DataFrame, counted over the partitions in order, so the rows equal
those of the single-process call on the concatenated segments, whatever the partitioning.

Each worker thread keeps one engine (``backend="auto"`` uses the worker's GPU when it has one).
``threads`` is the CPU backend's threads per task: 1 by default, since Dask already runs one
task per worker thread.

The same per-partition functions (``first_hit_frame`` and co.) plug into other engines that
hand out batches: Ray Data's ``map_batches`` and Spark's ``mapInArrow`` (see the README).
"""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd

import rectcast

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


def _segments(frame: pd.DataFrame, rounding: str = "exact") -> np.ndarray:
    """A partition's segment columns, side by side as float32 (N, 4), C order: float32 as it
    is, other numbers converted exactly (``rectcast``'s ``rounding=`` rule)."""
    _check_columns(frame.columns, frame.dtypes)
    return rectcast._records(frame, rectcast.SEGMENT_COLUMNS, "segments", None, rounding)


def _frame(rows: np.ndarray, offset: int) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    frame["segment"] += np.uint64(offset)
    return frame


def _shapes(query, rects, polygons, shapes, rounding="exact") -> dict:
    """The one target given (``rectcast``'s forms: rects, polygons or a registered shape's
    keyword), as the keyword the engine takes, in the form sent to the workers (numpy arrays;
    polygons as (vertices, offsets))."""
    name, value = rectcast._one_target(query, rects, polygons, shapes)
    if name == "polygons":
        return {name: rectcast._polygons(value, "polygons")}
    columns = rectcast.RECT_COLUMNS if name == "rects" else rectcast._SHAPES[name]["columns"]
    return {name: rectcast._records(value, columns, name, None, rounding)}


def _call(engine: rectcast.Engine, query: str, segments: np.ndarray, shapes) -> np.ndarray:
    """`query` of `segments` against `shapes`: a rects array (the per-partition functions'
    positional form) or a dict from `_shapes`."""
    if isinstance(shapes, dict):
        return getattr(engine, query)(segments, **shapes)
    return getattr(engine, query)(segments, shapes)


def first_hit_frame(
    frame: pd.DataFrame, rects, offset: int = 0, backend: str = "auto", threads: int = 1, rounding: str = "exact"
):
    """First hits of one batch of segments as a pandas DataFrame; ``segment`` counts from
    ``offset``. ``rects``: a rects array, or ``{"walls" | "circles" | "polygons": ...}``."""
    rows = _call(_engine(backend, threads), "first_hit", _segments(frame, rounding), rects)
    return _frame(rows, offset)


def hits_frame(
    frame: pd.DataFrame, rects, offset: int = 0, backend: str = "auto", threads: int = 1, rounding: str = "exact"
):
    """Hitting pairs of one batch of segments as a pandas DataFrame; ``segment`` counts from
    ``offset``. ``rects`` as for ``first_hit_frame``."""
    rows = _call(_engine(backend, threads), "hits", _segments(frame, rounding), rects)
    return _frame(rows, offset)


def counts_array(
    frame: pd.DataFrame, rects, backend: str = "auto", threads: int = 1, rounding: str = "exact"
) -> np.ndarray:
    """Hits per rect (or shape) of one batch of segments (uint64, one per shape)."""
    return _call(_engine(backend, threads), "counts", _segments(frame, rounding), rects)["hits"]


def _meta(query: str, shapes: dict) -> pd.DataFrame:
    """The empty result of `query`: the columns and dtypes of every partition's result."""
    nothing = np.zeros((0, 4), np.float32)
    return pd.DataFrame(_call(rectcast.Engine("cpu", 1), query, nothing, shapes))


def _offsets(ddf) -> list:
    """Where each partition's rows start in the whole DataFrame."""
    lengths = ddf.map_partitions(len).compute()
    return np.concatenate([[0], np.cumsum(np.asarray(lengths, dtype=np.int64))[:-1]]).tolist()


def _per_partition(ddf, shapes, query, frame_function, backend, threads, rounding):
    import dask

    shared = dask.delayed(shapes, pure=True)  # one key: each worker fetches the shapes once
    offsets = _offsets(ddf)

    def run(frame, shapes, partition_info=None):
        offset = offsets[partition_info["number"]] if partition_info else 0
        return frame_function(frame, shapes, offset, backend, threads, rounding)

    return ddf.map_partitions(run, shared, meta=_meta(query, shapes), align_dataframes=False)


def first_hit(
    ddf, rects=None, *, polygons=None, backend: str = "auto", threads: int = 1, rounding: str = "exact",
    **shapes,
):
    """Each segment's first hit, as a lazy Dask DataFrame (one row per segment, in order).
    Against rects, or a registered shape (``rectcast.SHAPES``: ``walls=``, ``circles=``) or
    polygons (``rectcast.first_hit``'s forms)."""
    _check_columns(ddf.columns, ddf.dtypes)
    shapes = _shapes("first_hit", rects, polygons, shapes, rounding)
    return _per_partition(ddf, shapes, "first_hit", first_hit_frame, backend, threads, rounding)


def hits(
    ddf, rects=None, *, polygons=None, backend: str = "auto", threads: int = 1, rounding: str = "exact",
    **shapes,
):
    """The hitting pairs in (segment, shape) order, as a lazy Dask DataFrame."""
    _check_columns(ddf.columns, ddf.dtypes)
    shapes = _shapes("hits", rects, polygons, shapes, rounding)
    return _per_partition(ddf, shapes, "hits", hits_frame, backend, threads, rounding)


def counts(
    ddf, rects=None, *, polygons=None, backend: str = "auto", threads: int = 1, rounding: str = "exact",
    **shapes,
) -> np.ndarray:
    """Hits per rect (or shape) over the whole DataFrame, summed across partitions (computed
    now): a structured array (rect, hits) like ``rectcast.counts``."""
    import dask

    _check_columns(ddf.columns, ddf.dtypes)
    shapes = _shapes("counts", rects, polygons, shapes, rounding)
    shared = dask.delayed(shapes, pure=True)
    parts = [dask.delayed(counts_array)(p, shared, backend, threads, rounding) for p in ddf.to_delayed()]
    total = dask.delayed(lambda arrays: np.sum(arrays, axis=0, dtype=np.uint64))(parts)
    # The table of no segments: every shape, with its fields, and no hits yet.
    out = _call(rectcast.Engine("cpu", 1), "counts", np.zeros((0, 4), np.float32), shapes)
    if parts:
        out["hits"] = total.compute()
    return out
