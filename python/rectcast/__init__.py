"""Segment-vs-rectangle collision for huge batches, exact, on the GPU or the CPU.

A thin layer over the Rust library ``rectcast``: the engine runs with the GIL released, inputs
are read in place when they are float32 arrays of shape (N, 4) in C order, and results come
back as a numpy structured array with the fields of the CLI's ``.npy`` output, or as a
``pyarrow.RecordBatch`` with ``to="arrow"``.

Inputs (``segments``: x0, y0, x1, y1; ``rects``: min_x, min_y, max_x, max_y) may be:

- a numpy float32 array of shape (N, 4), C order: read in place, no copy (unless its buffer is
  not aligned to 4 bytes, as a deserialized one may be: then it is copied to one that is). This
  is the fast path: nothing is converted or copied, so its cost is the library's call alone;
- any other real numeric array of that shape (float64, integers, Fortran order as
  ``df.to_numpy()`` gives): copied to float32 in C order first (about one pass over the data),
  exactly. A value float32 cannot hold exactly (0.1 as a float64, say) raises ``ValueError``
  naming its row and column, since the answer would be about another number;
  ``rounding="nearest"`` rounds such values instead and warns (``RoundingWarning``) with their
  count. ``copy=False`` refuses any copy;
- a pandas DataFrame, or Arrow data (a ``pyarrow.Table`` or ``RecordBatch``, a polars
  DataFrame, anything with the Arrow PyCapsule interface), with numeric columns named as above,
  in any order, other columns ignored: the four columns are copied side by side, by the same
  exact rule.

shapely and geopandas geometry (rectcast/geometry.py) goes in too: line strings as segments,
each row naming its line, and polygons; ``to="geopandas"`` gives a GeoDataFrame back.

Invalid values (NaN, infinities, beyond ±2^62, min > max) raise ``ValueError`` naming the row
and the field; GPU failures raise ``RuntimeError``, and so does an internal error (a bug).
Inputs must not change while a call reads them (another thread writing into the array): the
answer is then unspecified, though never a crash.

Threads may share an engine (and the module functions' default engine): their calls take
turns on it. After ``os.fork`` (``multiprocessing``'s default on Linux) a child's calls work; a
GPU engine made before the fork is refused there (an ``"auto"`` one runs on the CPU).
"""

from __future__ import annotations

import inspect
import os
import tempfile
import threading

import numpy as np


def _quiet_drivers():
    """Mesa's Vulkan drivers print "error: XDG_RUNTIME_DIR is invalid or not set" on every
    adapter list when the variable is unset (headless machines, cron, containers, CI), although
    nothing is wrong. As the CLI does: give them a private runtime folder of this user's
    (``$TMPDIR/rectcast-runtime-UID``, mode 0700), at import, before any thread of ours runs.
    Where it cannot be had safely, the noise stays."""
    if os.path.isabs(os.environ.get("XDG_RUNTIME_DIR", "")) or not hasattr(os, "geteuid"):
        return
    uid = os.geteuid()
    path = os.path.join(tempfile.gettempdir(), f"rectcast-runtime-{uid}")
    try:
        os.mkdir(path, 0o700)
    except OSError:
        pass
    try:
        st = os.lstat(path)
    except OSError:
        return
    import stat

    if stat.S_ISDIR(st.st_mode) and st.st_uid == uid and st.st_mode & 0o077 == 0:
        os.environ["XDG_RUNTIME_DIR"] = path


_quiet_drivers()

from . import _rectcast  # noqa: E402
from .geometry import Polylines, SridWarning, from_shapely, read_polygons, read_polylines  # noqa: E402
from . import geometry as _geometry  # noqa: E402

__all__ = [
    "Engine",
    "SEGMENT_COLUMNS",
    "RECT_COLUMNS",
    "KIND_NAMES",
    "CONTACT_NAMES",
    "SIDE_NAMES",
    "pairs",
    "first_hit",
    "first_hit_rects",
    "wall_pairs",
    "circle_pairs",
    "SHAPES",
    "CIRCLE_COLUMNS",
    "polygon_pairs",
    "overlaps",
    "CIRCLE_KIND_NAMES",
    "hits",
    "counts",
    "clip",
    "default_engine",
    "RoundingWarning",
    "ROUNDINGS",
    "OUTPUTS",
    "from_shapely",
    "read_polygons",
    "read_polylines",
    "SridWarning",
    "Polylines",
]

#: The registered shapes, by keyword (``walls=``, ``circles=``), as the Rust module describes
#: them: ``name`` (their rows' field), ``columns`` (a record's), ``category`` (the field of a
#: contact's category) and ``category_names`` (the name of each of its codes).
_SHAPES = {shape["keyword"]: shape for shape in _rectcast.shapes()}
#: The keyword of each registered shape: every query takes one of them instead of ``rects``.
SHAPES = tuple(_SHAPES)

SEGMENT_COLUMNS = ("x0", "y0", "x1", "y1")
RECT_COLUMNS = ("min_x", "min_y", "max_x", "max_y")
CIRCLE_COLUMNS = tuple(_SHAPES["circles"]["columns"])
#: The name of each ``kind`` code: 0 miss, 1 inside, 2 enter, 3 exit, 4 cross.
KIND_NAMES = tuple(_rectcast.kind_names())
#: The name of each segment x segment ``contact`` code: 0 miss, 1 cross, 2 touch, 3 overlap.
CONTACT_NAMES = tuple(_SHAPES["walls"]["category_names"])
#: The name of each segment x circle ``kind`` code: 0 miss, 1 inside, 2 enter, 3 exit, 4 cross,
#: 5 tangent.
CIRCLE_KIND_NAMES = tuple(_SHAPES["circles"]["category_names"])
#: The name of each ``entry``/``exit`` value (side bits 1 min_x, 2 max_x, 4 min_y, 8 max_y).
SIDE_NAMES = tuple(_rectcast.side_names())


#: The singular of each input's name, as the library's errors say it ("segment 2: x1 ...").
_ROW = {
    "segments": "segment",
    "rects": "rect",
    "rect": "rect",
    "other": "other",
    **{keyword: shape["name"] for keyword, shape in _SHAPES.items()},
}

#: What ``rounding=`` takes: ``"exact"`` refuses a value float32 cannot hold, ``"nearest"``
#: rounds it (to nearest, ties to even) and warns with the count.
ROUNDINGS = ("exact", "nearest")


class RoundingWarning(UserWarning):
    """Input values were rounded to float32 (``rounding="nearest"``): the question asked is
    about the rounded values. The message gives the count."""


def _check_rounding(rounding):
    if rounding not in ROUNDINGS:
        raise ValueError(f'rounding: expected "exact" or "nearest", found {rounding!r}')


def _real(values, name, where=""):
    """Refuses what is not real numbers (complex, bool, strings, objects)."""
    kind = values.dtype.kind
    if kind == "c":
        raise TypeError(f"{name}{where}: expected real numbers, found {values.dtype} (complex); "
                        "pass the real part (np.real) if that is what you mean")
    if kind not in "fiu":
        raise TypeError(f"{name}{where}: expected real numbers, found {values.dtype}")


def _to_float32(values, name, columns, rounding, column_offset=0):
    """``values`` (2-D, real numbers) as float32 in C order, exactly: a value float32 cannot
    hold raises ``ValueError`` naming its row and column, unless ``rounding="nearest"``, which
    rounds it and warns (``RoundingWarning``) with the count."""
    out = np.ascontiguousarray(values, dtype=np.float32)
    if values.dtype == np.float32 or (values.dtype.kind == "f" and values.dtype.itemsize < 4) or (
        values.dtype.kind in "iu" and values.dtype.itemsize <= 2
    ):
        return out  # float16 and 8- or 16-bit integers: float32 holds every value
    wide = out.astype(np.float64)
    if values.dtype.kind == "f":
        same = (wide == values) | (np.isnan(wide) & np.isnan(values))
    else:
        fits = np.abs(wide) < 2.0**63
        same = fits & (np.where(fits, wide, 0).astype(np.int64) == values.astype(np.int64))
        if values.dtype.kind == "u":
            same &= values <= np.iinfo(np.int64).max
    if same.all():
        return out
    inexact = np.argwhere(~same)
    if rounding == "nearest":
        import warnings

        warnings.warn(f"{name}: {len(inexact)} values rounded to float32", RoundingWarning, stacklevel=4)
        return out
    row, col = (int(i) for i in inexact[0])
    raise ValueError(
        f"{_ROW.get(name, name)} {row}: {columns[col + column_offset]} is {values[row, col].item()!r} ({values.dtype}), "
        f"which float32 cannot hold exactly ({len(inexact)} such values in {name}); pass "
        f'rounding="nearest" to round them to the nearest float32'
    )


def _is_pandas(data):
    return type(data).__module__.startswith("pandas") and hasattr(data, "columns")


def _records(data, columns, name, copy=None, rounding="exact"):
    """``data`` as a float32 (N, len(columns)) C-order array: in place when it already is
    one (the zero-copy path), else converted exactly (``_to_float32``). ``copy=False`` refuses
    any conversion instead."""
    _check_rounding(rounding)
    if _geometry.is_geometry(data):
        if tuple(columns) != SEGMENT_COLUMNS:
            raise TypeError(
                f"{name}: shapely geometry goes in as segments (line strings), walls or polygons=; "
                f"{name} take an array of {', '.join(columns)}"
            )
        # Line strings as their segments, their coordinates rounded to nearest (geometry.py).
        return _geometry.polylines(data, name).segments
    if hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__") or _is_pandas(data):
        return _from_arrow(data, columns, name, rounding)
    if isinstance(data, np.ma.MaskedArray):
        # The mask says which values are missing; read as data, they would be answered.
        masked = np.ma.getmaskarray(data)
        if masked.any():
            row = int(np.flatnonzero(masked.any(axis=-1) if masked.ndim == 2 else masked)[0])
            raise ValueError(
                f"{_ROW.get(name, name)} {row}: a masked value: a masked array's masked values "
                "are missing, not data; fill them (np.ma.filled) or drop their rows "
                "(data[~np.ma.getmaskarray(data).any(axis=1)]) first"
            )
        data = np.ma.getdata(data)
    if not isinstance(data, np.ndarray):
        raise TypeError(
            f"{name}: expected a numpy array of shape (N, {len(columns)}) or Arrow data "
            f"(a pyarrow table, pandas or polars DataFrame), found {type(data).__name__}"
        )
    if data.ndim != 2 or data.shape[1] != len(columns):
        raise ValueError(f"{name}: expected shape (N, {len(columns)}) ({', '.join(columns)}), found {data.shape}")
    if data.dtype == np.float32 and data.flags.c_contiguous:
        # Read in place; only an unaligned buffer (as a deserialized one may be) is copied,
        # since Rust reads f32 values at aligned addresses.
        return data if data.flags.aligned else np.require(data, requirements=["C", "A"])
    _real(data, name)
    if copy is False:
        raise TypeError(
            f"{name}: copy=False, but {data.dtype}"
            f"{'' if data.flags.c_contiguous else ' not in C order'} needs a copy to float32 in C order"
        )
    return _to_float32(data, name, columns, rounding)


def _from_arrow(data, columns, name, rounding="exact"):
    """The named columns of Arrow data (a pyarrow table or batch, a pandas or polars
    DataFrame: anything with the Arrow PyCapsule interface), side by side as float32."""
    import pyarrow as pa

    table = pa.table(data)
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise ValueError(
            f"{name}: no column {missing[0]}: expected numeric columns {','.join(columns)} "
            f"(in any order; others are ignored), found {','.join(map(str, table.column_names))}"
        )
    out = np.empty((table.num_rows, len(columns)), dtype=np.float32)
    for i, column in enumerate(columns):
        values = table.column(column)
        if values.null_count:
            row = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
            raise ValueError(f"{_ROW.get(name, name)} {row}: {column} is null")
        if not (pa.types.is_floating(values.type) or pa.types.is_integer(values.type)):
            raise TypeError(f"{name}: column {column} is {values.type}, expected numbers")
        array = values.to_numpy().reshape(-1, 1)
        out[:, i] = _to_float32(array, name, columns, rounding, column_offset=i)[:, 0]
    return out


def _polygons(polygons, name):
    """Polygons as the flat form the Rust module takes: vertices float32 (V, 2), offsets
    int64, and polygon offsets (int64, or ``None``: one ring each). From ``(vertices,
    offsets)`` (one ring each: P + 1 offsets), ``(vertices, ring_offsets, polygon_offsets)``
    (rings each, GeoArrow's form: R + 1 and P + 1 offsets), a sequence of rings, or shapely
    polygons and multipolygons (a GeoSeries, a GeoDataFrame: ``geometry.polygons``)."""
    if _geometry.is_geometry(polygons):
        polygons = _geometry.polygons(polygons, name)
    if isinstance(polygons, tuple) and len(polygons) == 3 and polygons[2] is None:
        polygons = polygons[:2]
    if isinstance(polygons, tuple) and len(polygons) == 3 and np.ndim(polygons[2]) == 1:
        vertices, offsets = _polygons(polygons[:2], name)[:2]
        polygon_offsets = np.require(polygons[2], dtype=np.int64, requirements=["C", "A"])
        if polygon_offsets.ndim != 1:
            raise ValueError(f"{name}: polygon offsets: expected one dimension, found {polygon_offsets.shape}")
        return vertices, offsets, polygon_offsets
    if isinstance(polygons, tuple) and len(polygons) == 2 and np.ndim(polygons[1]) == 1:
        vertices, offsets = polygons
    else:
        rings = [np.asarray(ring, dtype=np.float32) for ring in polygons]
        for i, ring in enumerate(rings):
            if ring.ndim != 2 or ring.shape[1] != 2:
                raise ValueError(f"{name} {i}: expected a ring of shape (n, 2), found {ring.shape}")
        vertices = np.concatenate(rings) if rings else np.zeros((0, 2), np.float32)
        offsets = np.concatenate([[0], np.cumsum([len(r) for r in rings])]).astype(np.int64)
    # C order and aligned, copying only where needed (arrays a Dask worker unpickled may
    # be neither).
    vertices = np.require(vertices, dtype=np.float32, requirements=["C", "A"])
    offsets = np.require(offsets, dtype=np.int64, requirements=["C", "A"])
    if vertices.ndim != 2 or vertices.shape[1] != 2:
        raise ValueError(f"{name}: vertices: expected shape (V, 2), found {vertices.shape}")
    return vertices, offsets, None


#: What ``to=`` takes.
OUTPUTS = ("numpy", "arrow", "pandas", "geopandas")

#: A polygon row's edges and their rings: -1 where there is none.
_EDGES = ("entry_edge", "exit_edge", "entry_ring", "exit_ring")

#: Index columns that are -1 where there is none (null in Arrow, <NA> in pandas).
_MAYBE_INDEX = ("rect", *(shape["name"] for shape in _SHAPES.values()), "polygon", *_EDGES)


def _check_output(to, ids):
    """``to`` and ``ids`` checked before any work."""
    if to not in OUTPUTS:
        raise ValueError(f'to: expected "numpy", "arrow", "pandas" or "geopandas", found {to!r}')
    if ids is not None and to == "numpy":
        raise TypeError('ids: a numpy result\'s fields are fixed; pass to="pandas", "arrow" or "geopandas"')


def _ids(ids, segments, count):
    """The id columns to carry into the rows, by segment: ``{name: values}`` (``None``: none).
    ``ids`` names columns of the segments (a pandas DataFrame or Arrow data), or is a
    sequence of one id per segment (the column ``id``)."""
    if ids is None:
        return None
    if isinstance(ids, str) or (isinstance(ids, (list, tuple)) and ids and all(isinstance(i, str) for i in ids)):
        names = [ids] if isinstance(ids, str) else list(ids)
        if _is_pandas(segments):
            available = list(map(str, segments.columns))
            column = lambda name: segments[name].to_numpy()  # noqa: E731
        elif hasattr(segments, "__arrow_c_stream__") or hasattr(segments, "__arrow_c_array__"):
            import pyarrow as pa

            table = pa.table(segments)
            available = table.column_names
            column = lambda name: table.column(name).to_numpy()  # noqa: E731
        else:
            raise TypeError("ids: column names need segments as a pandas DataFrame or Arrow data")
        for name in names:
            if name not in available:
                raise ValueError(f"ids: no column {name} among the segments' {','.join(available)}")
        return {name: column(name) for name in names}
    values = np.asarray(ids)
    if values.ndim != 1 or len(values) != count:
        raise ValueError(f"ids: expected one id per segment ({count}), found shape {values.shape}")
    return {"id": values}


def _segments(segments, ids, copy, rounding):
    """The segments as float32 (N, 4), and the id columns their rows carry (``_ids``). Line
    strings give their segments, each row naming its line and its place in it."""
    if _geometry.is_geometry(segments):
        lines = _geometry.polylines(segments, "segments")
        return lines.segments, _line_ids(ids, segments, lines)
    s = _records(segments, SEGMENT_COLUMNS, "segments", copy, rounding)
    return s, _ids(ids, segments, len(s))


def _line_ids(ids, segments, lines):
    """The columns line strings carry into the rows, by segment: ``ids`` (as ``_ids`` takes
    them, but one per line: column names of a GeoDataFrame, or a sequence), then ``line`` (the
    row's label, or its number) and ``line_segment``."""
    columns = {}
    if isinstance(ids, str) or (isinstance(ids, (list, tuple)) and ids and all(isinstance(i, str) for i in ids)):
        names = [ids] if isinstance(ids, str) else list(ids)
        if not hasattr(segments, "columns"):
            raise TypeError("ids: column names need the lines as a GeoDataFrame")
        for name in names:
            if name not in segments.columns:
                raise ValueError(f"ids: no column {name} among the lines' {','.join(map(str, segments.columns))}")
            columns[name] = segments[name].to_numpy()[lines.line]
    elif ids is not None:
        values = np.asarray(ids)
        if values.ndim != 1 or len(values) != lines.rows:
            raise ValueError(f"ids: expected one id per line ({lines.rows}), found shape {values.shape}")
        columns["id"] = values[lines.line]
    columns["line"] = lines.line_ids()
    columns["line_segment"] = lines.line_segment
    return columns


def _table(packed, to: str, categories=None, ids=None, segments=None, crs=None, geometry=None, labels=None):
    """The packed rows from the Rust module as a numpy structured array (a view of its bytes,
    no copy), an Arrow batch, a pandas DataFrame or a GeoDataFrame (``categories``: the names
    of the codes of each category field, by field; ``kind`` as rects' by default), with
    ``ids`` (from ``_ids``) joined on the ``segment`` column. A GeoDataFrame's geometry is
    ``geometry`` where given, else comes from the rows and ``segments`` (``_hit_geometry``),
    in ``crs``. ``labels``: (field, the targets' index labels), carried as ``{field}_index``
    beside the target's number (null where there is none)."""
    data, descr = packed
    rows = data.view(np.dtype(list(descr)))
    categories = {"kind": KIND_NAMES} if categories is None else categories
    if ids and "segment" not in rows.dtype.names:
        raise ValueError(f"ids: these rows ({', '.join(rows.dtype.names)}) have no segment to join on")
    if to == "numpy":
        return rows
    if labels is not None:
        field, labels = labels
        at = rows.dtype.names.index(field) + 1
        target = rows[field].astype(np.int64)
        missing = target < 0
        labelled = np.asarray(labels)[np.where(missing, 0, target)] if len(labels) else target
    if to == "arrow":
        import pyarrow as pa

        batch = _arrow(rows, categories)
        for i, (name, values) in enumerate((ids or {}).items()):
            batch = batch.add_column(i, name, pa.array(np.take(values, rows["segment"])))
        if labels is not None:
            batch = batch.add_column(at + len(ids or {}), f"{field}_index", pa.array(labelled, mask=missing))
        return batch
    import pandas as pd

    frame = pd.DataFrame(rows) if to == "frame" else _pandas(rows, categories)
    if labels is not None:
        column = pd.Series(labelled)
        if rows[field].dtype == np.int64:
            # A target that may be missing (a first hit's): nullable whether or not this batch
            # has a miss, so that every batch (a Dask partition's) has one dtype.
            nullable = pd.Series(np.asarray(labels)).convert_dtypes().dtype
            column = column.astype(object).where(~missing, None).astype(nullable)
        frame.insert(at, f"{field}_index", column.array)
    for i, (name, values) in enumerate((ids or {}).items()):
        frame.insert(i, name, np.take(values, rows["segment"]))
    if to == "geopandas":
        import geopandas

        if geometry is None:
            geometry = _hit_geometry(rows, segments)
        return geopandas.GeoDataFrame(frame, geometry=geometry, crs=crs)
    return frame


def _hit_geometry(rows, segments):
    """Each row's geometry, for a GeoDataFrame: a clip's segment (x0, y0, x1, y1), or the part
    of the row's segment from t_enter to t_exit (a point where they are equal); ``None`` on a
    miss. Points are computed in float64 from the rounded t, then rounded to float32: geometry
    to draw and join, within an ulp or two of the true points, not exact (the t are). For a concave polygon it spans any gap between the ends of I."""
    import shapely

    names = rows.dtype.names
    if {"x0", "y0", "x1", "y1"} <= set(names):
        ends = np.stack([rows[c] for c in ("x0", "y0", "x1", "y1")], axis=1).astype(np.float64)
    elif {"segment", "t_enter", "t_exit"} <= set(names) and segments is not None:
        s = segments[rows["segment"]].astype(np.float64)
        start, step = s[:, :2], s[:, 2:] - s[:, :2]
        ends = np.hstack([start + rows["t_enter"][:, None] * step, start + rows["t_exit"][:, None] * step])
        # At the inputs' precision.
        ends = ends.astype(np.float32).astype(np.float64)
    else:
        raise TypeError(f'to="geopandas": these rows ({", ".join(names)}) have no geometry; pass to="pandas"')
    geometry = np.full(len(rows), None, dtype=object)
    hit = ~np.isnan(ends).any(axis=1)
    point = hit & (ends[:, 0] == ends[:, 2]) & (ends[:, 1] == ends[:, 3])
    line = hit & ~point
    geometry[point] = shapely.points(ends[point, :2])
    geometry[line] = shapely.linestrings(ends[line].reshape(-1, 2, 2))
    return geometry


def _crs(*inputs):
    """The coordinate reference system of the geopandas inputs (``None`` where none has one);
    inputs in two different ones are refused."""
    found = [(name, data.crs) for name, data in inputs if getattr(data, "crs", None) is not None]
    for name, crs in found[1:]:
        if crs != found[0][1]:
            raise ValueError(
                f"{name} are in {crs.to_string()}, {found[0][0]} in {found[0][1].to_string()}: "
                f"bring them to one CRS first (GeoSeries.to_crs)"
            )
    return found[0][1] if found else None


def _pandas(rows: np.ndarray, categories):
    """The rows as a pandas DataFrame: categories (kind, contact) and sides categorical (NaN
    where there is none), indices nullable (``<NA>`` on a miss), t NaN on a miss."""
    import pandas as pd

    columns = {}
    for field in rows.dtype.names:
        values = rows[field]
        if field in categories:
            codes = values.astype(np.int16)
            columns[field] = pd.Categorical.from_codes(codes, categories=list(categories[field]))
        elif field in ("entry", "exit"):
            codes = values.astype(np.int16)
            codes[codes == 0] = -1
            columns[field] = pd.Categorical.from_codes(codes, categories=list(SIDE_NAMES))
        elif field in _MAYBE_INDEX and values.dtype == np.int64:
            columns[field] = pd.arrays.IntegerArray(np.ascontiguousarray(values), values < 0)
        else:
            columns[field] = np.ascontiguousarray(values)
    return pd.DataFrame(columns)


def _arrow(rows: np.ndarray, categories):
    """The CLI's Parquet columns: indices uint64, t and coordinates float32, categories (kind,
    contact) and sides as names; null where the CSV output is empty (a miss)."""
    import pyarrow as pa

    names = {field: pa.array(list(codes), type=pa.string()) for field, codes in categories.items()}
    sides = pa.array([s or None for s in SIDE_NAMES], type=pa.string())
    arrays = []
    for field in rows.dtype.names:
        values = np.ascontiguousarray(rows[field])
        if field in names:
            array = names[field].take(pa.array(values))
        elif field in ("entry", "exit"):
            array = sides.take(pa.array(values))
        elif values.dtype == np.float32:
            array = pa.array(values, mask=np.isnan(values))
        elif field in _MAYBE_INDEX and values.dtype == np.int64:
            array = pa.array(values.astype(np.uint64), mask=values < 0)
        else:
            array = pa.array(values)
        arrays.append(array)
    return pa.RecordBatch.from_arrays(arrays, names=list(rows.dtype.names))


def _one_target(query, rects, polygons, shapes):
    """The one target a query was given, as (its keyword, its value): ``rects``, ``polygons``
    or a registered shape's keyword (``SHAPES``) among ``shapes``."""
    unknown = [keyword for keyword in shapes if keyword not in _SHAPES]
    if unknown:
        raise TypeError(
            f"{query}: unexpected keyword {unknown[0]!r}: the targets are rects, polygons and the "
            f"shapes {', '.join(SHAPES)}"
        )
    given = {"rects": rects, **{keyword: shapes.get(keyword) for keyword in SHAPES}, "polygons": polygons}
    given = {keyword: value for keyword, value in given.items() if value is not None}
    if len(given) != 1:
        targets = ", ".join(["rects", *SHAPES, "polygons"])
        raise TypeError(f"{query}: give one of {targets}; found {list(given) or 'none'}")
    return next(iter(given.items()))


class _Target:
    """A query's one target (``rects``, ``polygons`` or a registered shape's keyword in
    ``shapes``), converted once: its keyword, the arrays the Rust module takes, and from
    geopandas its index labels (polygons: carried as ``polygon_index``), its geometry (counts
    drawn on polygons, where ``geometry`` asks for it) and its CRS. Picklable: the Dask functions send it to each worker."""

    __slots__ = ("keyword", "arrays", "labels", "geometry", "crs")

    def __init__(self, query, rects, polygons, shapes, copy, rounding, geometry=False):
        keyword, value = _one_target(query, rects, polygons, shapes)
        self.keyword = keyword
        self.crs = getattr(value, "crs", None)
        self.labels = self.geometry = None
        if keyword == "rects":
            self.arrays = _records(value, RECT_COLUMNS, "rects", copy, rounding)
        elif keyword == "polygons":
            self.arrays = _polygons(value, "polygons")
            # A GeoSeries' or GeoDataFrame's index, carried beside each polygon's number.
            if type(value).__module__.startswith("geopandas"):
                self.labels = value.index
            if geometry and query == "counts" and _geometry.is_geometry(value):
                self.geometry = _geometry.geometries(value, "polygons")
        else:
            self.arrays = _records(value, _SHAPES[keyword]["columns"], keyword, copy, rounding)

    def __getstate__(self):
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state):
        # Arrays a Dask worker unpickled may be unaligned: aligned here, copied only if not.
        def aligned(a):
            return a if a is None else np.require(a, requirements=["C", "A"])

        arrays = state["arrays"]
        state["arrays"] = tuple(map(aligned, arrays)) if isinstance(arrays, tuple) else aligned(arrays)
        for name, value in state.items():
            setattr(self, name, value)


class Engine:
    """One backend, kept across calls: buffers are reused, so keep the engine.

    ``backend``: ``"auto"`` (each call where a cost model expects it sooner: the CPU, or a
    hardware GPU opened at the first call that would be sooner there, its opening included;
    ``chosen`` says where the last call ran and why; ``RECTCAST_AUTO_COSTS`` sets the model's
    constants, a ``ValueError`` naming an item it cannot read), ``"gpu"`` (fail without one) or
    ``"cpu"``. ``threads``: the CPU backend's worker threads, 0 for one per core.

    Every query takes, besides its inputs:

    - ``to``: ``"numpy"`` (a structured array, the CLI's ``.npy`` rows, no copy), ``"arrow"``
      (a ``pyarrow.RecordBatch``, the CLI's Parquet columns) or ``"pandas"`` (a DataFrame:
      ``kind``, ``contact``, ``entry`` and ``exit`` categorical, indices nullable);
    - ``ids``: with ``to="pandas"`` or ``"arrow"``, the user's id columns carried into the rows
      by ``segment``: a column name (or names) of the segments' DataFrame or Arrow table, or
      one id per segment (a column ``id``);
    - ``copy`` and ``rounding``: how inputs other than float32 in C order are converted (the
      module's docstring): ``copy=False`` refuses any copy, ``rounding="nearest"`` rounds
      values float32 cannot hold instead of refusing them.
    """

    def __init__(self, backend: str = "auto", threads: int = 0):
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 0:
            raise ValueError(f"threads: expected a whole number >= 0 (0: one per core), found {threads!r}")
        self._engine = _rectcast.Engine(backend, int(threads))

    @property
    def chosen(self) -> str:
        """What the engine runs on; with ``"auto"``, where its last call ran and why."""
        return self._engine.chosen

    def __repr__(self) -> str:
        return f"rectcast.Engine({self.chosen!r})"

    def _query(self, query, segments, rects, polygons, shapes, to, copy, rounding, ids):
        """``query`` against the one target given (``rects``, ``polygons`` or a registered
        shape's keyword in ``shapes``), its rows as ``to`` asks."""
        _check_output(to, ids)
        keyword, value = _one_target(query, rects, polygons, shapes)
        crs = _crs(("segments", segments), (keyword, value))
        s, joined = _segments(segments, ids, copy, rounding)
        target = _Target(query, rects, polygons, shapes, copy, rounding, geometry=to == "geopandas")
        return self._rows_of(query, s, joined, crs, target, to)

    def _run(self, query, segments, target, to, copy, rounding, ids):
        """``query`` against a :class:`_Target`, its rows as ``to`` asks (``"frame"``: the
        numpy rows as a pandas DataFrame, with the id columns and labels the pandas form
        has)."""
        crs = _crs(("segments", segments), (target.keyword, target))
        s, joined = _segments(segments, ids, copy, rounding)
        return self._rows_of(query, s, joined, crs, target, to)

    def _rows_of(self, query, s, joined, crs, target, to):
        """``query`` of segments ``s`` (float32 (N, 4)) against a :class:`_Target`, the rows
        joined with ``joined`` (from ``_segments``) and as ``to`` asks, in ``crs``."""
        if query == "counts":
            # Rows by target: nothing to join by segment.
            joined = None
        if target.keyword == "rects":
            rows = getattr(self._engine, query)(s, target.arrays)
            return _table(rows, to, ids=joined, segments=s, crs=crs)
        if target.keyword == "polygons":
            rows = self._engine.polygon_query(query, s, *target.arrays)
            labels = None if target.labels is None else ("polygon", target.labels)
            if query == "counts" and to == "geopandas" and target.geometry is not None:
                # Hits per polygon, on the polygons' own geometry.
                return _table(rows, to, crs=crs, geometry=target.geometry, labels=labels)
            return _table(rows, to, ids=joined, segments=s, crs=crs, labels=labels)
        shape = _SHAPES[target.keyword]
        rows = self._engine.shape_query(query, target.keyword, s, target.arrays)
        return _table(rows, to, {shape["category"]: shape["category_names"]}, joined, s, crs)

    def pairs(
        self, segments, rects=None, *, polygons=None, to: str = "numpy", copy: bool | None = None,
        rounding: str = "exact", ids=None, **shapes,
    ):
        """Every segment against every rect, one row per pair, segment-major.

        Fields: segment, rect (uint64), hit (bool), kind (uint8, a ``KIND_NAMES`` code),
        t_enter, t_exit (float32, NaN on a miss), entry, exit (uint8 side bits, names in
        ``SIDE_NAMES``). With a registered shape's keyword (``SHAPES``: ``walls=``, ``circles=``)
        or ``polygons=`` instead of rects:
        ``wall_pairs``, ``circle_pairs`` and ``polygon_pairs``.

        ``walls=`` takes what segments take: an (N, 4) array of x0, y0, x1, y1, a DataFrame
        or Arrow table with those columns, or shapely line strings (a GeoSeries or array of
        LineString and MultiLineString), each of their segments one wall, numbered in order.
        ``polygons=`` takes shapely Polygons and MultiPolygons (holes included) or
        ``Polygons``."""
        return self._query("pairs", segments, rects, polygons, shapes, to, copy, rounding, ids)

    def first_hit(
        self, segments, rects=None, *, polygons=None, to: str = "numpy", copy: bool | None = None,
        rounding: str = "exact", ids=None, **shapes,
    ):
        """The closest hit of each segment: the smallest t_enter, ties to the lowest rect.

        One row per segment: segment, rect (int64, -1 on a miss), kind (0 on a miss),
        t_enter, t_exit (NaN on a miss), entry, exit. With ``walls=`` or ``circles=``: fields
        segment, wall or circle (-1 on a miss), contact or kind, t_enter, t_exit; with
        ``polygons=``: segment, polygon, kind, t_enter, t_exit, entry_edge, exit_edge,
        entry_ring, exit_ring."""
        return self._query("first_hit", segments, rects, polygons, shapes, to, copy, rounding, ids)

    def hits(
        self, segments, rects=None, *, polygons=None, to: str = "numpy", copy: bool | None = None,
        rounding: str = "exact", ids=None, **shapes,
    ):
        """Only the hitting pairs, in (segment, rect) order, with the fields of ``pairs``."""
        return self._query("hits", segments, rects, polygons, shapes, to, copy, rounding, ids)

    def counts(
        self, segments, rects=None, *, polygons=None, to: str = "numpy", copy: bool | None = None,
        rounding: str = "exact", **shapes,
    ):
        """Hits per rect: one row (rect, hits) per rect; (wall, hits), (circle, hits) or
        (polygon, hits) with ``walls=``, ``circles=`` or ``polygons=``."""
        return self._query("counts", segments, rects, polygons, shapes, to, copy, rounding, None)

    def wall_pairs(self, segments, walls, *, to: str = "numpy", copy: bool | None = None, rounding: str = "exact", ids=None):
        """Segment x segment: every segment against every wall (both x0, y0, x1, y1), one row
        per pair, segment-major. Fields: segment, wall (uint64), hit (bool), contact (uint8, a
        ``CONTACT_NAMES`` code), t_enter, t_exit (float32 along the segment, NaN on a miss)."""
        return self.pairs(segments, walls=walls, to=to, copy=copy, rounding=rounding, ids=ids)

    def circle_pairs(self, segments, circles, *, to: str = "numpy", copy: bool | None = None, rounding: str = "exact", ids=None):
        """Segment x circle: every segment against every closed disk (cx, cy, r, r >= 0), one
        row per pair, segment-major. Fields: segment, circle (uint64), hit (bool), kind (uint8,
        a ``CIRCLE_KIND_NAMES`` code), t_enter, t_exit (float32 along the segment, NaN on a
        miss)."""
        return self.pairs(segments, circles=circles, to=to, copy=copy, rounding=rounding, ids=ids)

    def polygon_pairs(self, segments, polygons, *, to: str = "numpy", copy: bool | None = None, rounding: str = "exact", ids=None):
        """Every segment against every polygon (closed: boundary and interior; holes outside,
        their boundaries in), segment-major. ``polygons``: a sequence of rings (each (n, 2), a
        closing repeat of the first vertex allowed), the flat form ``(vertices, offsets)``:
        float32 (V, 2) and P + 1 integers from 0 to V, GeoArrow's ``(vertices, ring_offsets,
        polygon_offsets)`` (rings each: shells, holes, a multipolygon's parts), or shapely
        polygons and multipolygons (a GeoSeries, a GeoDataFrame). Fields: segment, polygon (uint64), hit (bool), kind (uint8,
        a ``KIND_NAMES`` code), t_enter, t_exit (float32, NaN on a miss), entry_edge, exit_edge
        (int64, edge k runs from vertex k to k + 1, numbered ring after ring; -1 where there is
        none), entry_ring, exit_ring (int64: the ring each edge is on, 0 the polygon's first
        ring, its shell; -1 where there is no edge). A polygon that is not simple raises
        ``ValueError`` naming it."""
        return self.pairs(segments, polygons=polygons, to=to, copy=copy, rounding=rounding, ids=ids)

    def overlaps(self, polygons, other, *, to: str = "numpy"):
        """Polygon × polygon: the overlapping pairs (closed: touching and containment count),
        fields polygon and other (uint64), in order. Both in ``polygon_pairs``' forms."""
        _check_output(to, None)
        a = _polygons(polygons, "polygons")
        b = _polygons(other, "other")
        return _table(self._engine.overlaps(*a, *b), to)

    def first_hit_rects(self, segments, rects, *, copy: bool | None = None, rounding: str = "exact") -> np.ndarray:
        """Each segment's first-hit rect alone, ``first_hit``'s ``rect`` column: an int64 array,
        -1 on a miss. On a GPU only 4 bytes a segment come back."""
        s = _records(segments, SEGMENT_COLUMNS, "segments", copy, rounding)
        r = _records(rects, RECT_COLUMNS, "rects", copy, rounding)
        return self._engine.first_hit_rects(s, r)

    def clip(
        self, segments, rect=None, *, rects=None, to: str = "numpy", copy: bool | None = None,
        rounding: str = "exact", ids=None,
    ):
        """Each segment clipped to ``rect`` (4 values: min_x, min_y, max_x, max_y), or to its
        own row of ``rects``. Fields: segment, kind, x0, y0, x1, y1 (NaN on a miss)."""
        _check_output(to, ids)
        if (rect is None) == (rects is None):
            raise TypeError("clip: give rect or rects")
        s, joined = _segments(segments, ids, copy, rounding)
        if rect is not None:
            one = np.asarray(rect)
            if one.shape != (4,):
                raise ValueError(
                    f"rect: expected 4 values ({', '.join(RECT_COLUMNS)}), found shape {one.shape}"
                )
            one = _records(one.reshape(1, 4), RECT_COLUMNS, "rect", copy, rounding)
            return _table(self._engine.clip(s, one, False), to, ids=joined, crs=_crs(("segments", segments)))
        r = _records(rects, RECT_COLUMNS, "rects", copy, rounding)
        if len(r) != len(s):
            raise ValueError(
                f"rects: clipping to one rect per segment needs as many rects as segments: "
                f"{len(s)} segments, {len(r)} rects"
            )
        return _table(self._engine.clip(s, r, True), to, ids=joined, crs=_crs(("segments", segments)))


_default = None
_default_lock = threading.Lock()


def default_engine() -> Engine:
    """The engine the module-level functions use: ``Engine("auto")``, made once, on first use
    (threads that ask at the same time wait for the one being made). Threads may share it:
    their calls take turns on it."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = Engine()
    return _default


def _on_the_default_engine(name):
    """The module-level ``name``: ``Engine.name`` on ``default_engine()``, with its signature
    and docstring (``help(rectcast.first_hit)`` shows them)."""
    method = getattr(Engine, name)

    def function(*args, **options):
        return getattr(default_engine(), name)(*args, **options)

    signature = inspect.signature(method)
    function.__signature__ = signature.replace(parameters=list(signature.parameters.values())[1:])
    function.__name__ = function.__qualname__ = name
    function.__module__ = __name__
    function.__doc__ = (
        f"{method.__doc__}\n\n        Runs on the default engine, ``default_engine()``: ``Engine(\"auto\")``, "
        "made once and shared by every thread."
    )
    return function


pairs = _on_the_default_engine("pairs")
first_hit = _on_the_default_engine("first_hit")
first_hit_rects = _on_the_default_engine("first_hit_rects")
hits = _on_the_default_engine("hits")
counts = _on_the_default_engine("counts")
wall_pairs = _on_the_default_engine("wall_pairs")
circle_pairs = _on_the_default_engine("circle_pairs")
polygon_pairs = _on_the_default_engine("polygon_pairs")
overlaps = _on_the_default_engine("overlaps")
clip = _on_the_default_engine("clip")
