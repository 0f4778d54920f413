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
- a pandas DataFrame (read without pyarrow), or Arrow data (a ``pyarrow.Table`` or
  ``RecordBatch``, a polars DataFrame, anything with the Arrow PyCapsule interface), with
  numeric columns named as above (rects also as geopandas' ``.bounds``: minx, miny, maxx,
  maxy), in any order, other columns ignored: the four columns are copied side by side, by
  the same exact rule. A pandas NaN is a NaN; a nullable column's ``pd.NA`` is null;
- a list of rows, as ``np.asarray`` reads it.

shapely and geopandas geometry (rectcast/geometry.py) goes in too: line strings as segments,
each row naming its line, and polygons; ``to="geopandas"`` gives a GeoDataFrame back. Geometry
far from (0, 0) is shifted near itself before it is rounded (``origin=``, ``Engine``).

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
import warnings

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
from . import progress as _progress  # noqa: E402
from . import skipping as _skipping  # noqa: E402
from .skipping import SkippedWarning  # noqa: E402

__version__ = _rectcast.__version__

__all__ = [
    "__version__",
    "Engine",
    "SEGMENT_COLUMNS",
    "RECT_COLUMNS",
    "KIND_NAMES",
    "CONTACT_NAMES",
    "SIDE_NAMES",
    "TARGET_KIND_NAMES",
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
    "DISPLACEMENT_BOUND",
    "OUTPUTS",
    "from_shapely",
    "read_polygons",
    "read_polylines",
    "SridWarning",
    "SkippedWarning",
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
#: Each kind of target (rect, circle, wall, polygon, the order of an exact tie) and its fields
#: in a query over several kinds at once, as the Rust module describes them.
_TARGET_KINDS = tuple(_rectcast.target_kinds())
#: The name of each ``target_kind`` code in a query over several kinds: 0 none (a first-hit
#: miss), 1 rect, 2 circle, 3 wall, 4 polygon.
TARGET_KIND_NAMES = (None, *(name for name, _ in _TARGET_KINDS))
#: The keyword of each kind of target, in ``target_kind`` order.
_TARGET_KEYWORDS = ("rects", "circles", "walls", "polygons")


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
    """Input values were rounded to float32 (``rounding="nearest"``), or geometry's rounding
    moved a vertex by more than ``DISPLACEMENT_BOUND`` of the inputs' extent: the question
    asked is about the rounded values. The message gives the count, or the distance."""


#: No shift: the coordinates as given.
_NO_ORIGIN = (0.0, 0.0)

#: Geometry whose rounding to float32 moves a vertex by more than this share (2^-20) of the
#: inputs' extent (their bounds' larger side) warns (``RoundingWarning``): the data lie far
#: from the origin for their size, and ``origin="auto"`` (or a given one) would keep their
#: precision. The CLI's bound.
DISPLACEMENT_BOUND = _geometry.DISPLACEMENT_BOUND


def _origin(origin, segments, *targets):
    """``origin=`` as the (x, y) subtracted from every coordinate before rounding: ``None``
    none; ``(x, y)``; ``"auto"``: where the segments and every target are shapely or geopandas
    geometry (float64 that must be rounded), ``geometry.auto_origin`` of the targets' bounds
    (a Dask job's workers share the targets, so they share the frame), else none."""
    if origin is None:
        return _NO_ORIGIN
    if isinstance(origin, str):
        if origin != "auto":
            raise ValueError(f'origin: expected "auto", None or (x, y), found {origin!r}')
        inputs = [segments, *targets]
        if not all(_geometry.is_geometry(d) and not isinstance(d, Polylines) for d in inputs):
            return _NO_ORIGIN
        bounds = np.array([_geometry.bounds(t, "targets") for t in targets])
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            total = [np.nanmin(bounds[:, 0]), np.nanmin(bounds[:, 1]), np.nanmax(bounds[:, 2]), np.nanmax(bounds[:, 3])]
        return _geometry.auto_origin(total)
    try:
        values = np.asarray(origin, dtype=np.float64)
    except (TypeError, ValueError):
        values = None
    if values is None or values.shape != (2,) or not np.isfinite(values).all():
        raise ValueError(f'origin: expected "auto", None or two finite numbers (x, y), found {origin!r}')
    return (float(values[0]), float(values[1]))


def _said_displacement(moved, origin):
    """The largest distance geometry's rounding moved a vertex (``moved``: what the
    conversions recorded, (distance, min_x, min_y, max_x, max_y) each), warned of
    (``RoundingWarning``) above ``DISPLACEMENT_BOUND`` of the inputs' extent; ``None`` where no
    geometry was converted."""
    if not moved:
        return None
    found = np.array(moved, dtype=np.float64)
    distance = float(np.nanmax(found[:, 0]))
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        extent = max(np.nanmax(found[:, 3]) - np.nanmin(found[:, 1]), np.nanmax(found[:, 4]) - np.nanmin(found[:, 2]))
    if np.isfinite(extent) and distance > DISPLACEMENT_BOUND * extent:
        warnings.warn(
            f"geometry rounded to float32 at origin {origin}: a vertex moved by {distance:.3g}, "
            f"more than 2^-20 of the inputs' extent {extent:.3g}; answers are about the rounded "
            f'vertices. origin="auto" (the default) shifts geometry-only calls near their '
            f"targets; pass origin=(x, y) near the data for others",
            RoundingWarning,
            stacklevel=_skipping.user_level(),
        )
    return distance


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


def _to_float32(values, name, columns, rounding, column_offset=0, shift=None):
    """``values`` (2-D, real numbers) less ``shift`` (by column, float64; ``None``: none) as
    float32 in C order, exactly: a value float32 cannot hold raises ``ValueError`` naming its
    row and column, unless ``rounding="nearest"``, which rounds it and warns
    (``RoundingWarning``) with the count."""
    less = ""
    if shift is not None:
        values = values.astype(np.float64) - shift
        less = " less the origin"
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
        warnings.warn(f"{name}: {len(inexact)} values rounded to float32", RoundingWarning, stacklevel=4)
        return out
    row, col = (int(i) for i in inexact[0])
    raise ValueError(
        f"{_ROW.get(name, name)} {row}: {columns[col + column_offset]}{less} is {values[row, col].item()!r} ({values.dtype}), "
        f"which float32 cannot hold exactly ({len(inexact)} such values in {name}); pass "
        f'rounding="nearest" to round them to the nearest float32'
    )


def _is_pandas(data):
    return type(data).__module__.startswith("pandas") and hasattr(data, "columns")


def _is_series(data):
    return type(data).__module__.startswith("pandas") and hasattr(data, "dtype") and not hasattr(data, "columns")


#: What a DataFrame's columns may be named instead (geopandas' ``.bounds`` for rects).
_ALIASES = {RECT_COLUMNS: ("minx", "miny", "maxx", "maxy")}


def _named(available, columns, name):
    """The names ``columns`` go by among ``available``: themselves, or their aliases
    (``_ALIASES``) where none of them is there; a missing one is refused."""
    alias = _ALIASES.get(tuple(columns))
    if alias and not any(c in available for c in columns) and all(a in available for a in alias):
        return list(alias)
    missing = [c for c in columns if c not in available]
    if missing:
        also = f" (or {','.join(alias)}, as geopandas' .bounds names them)" if alias else ""
        raise ValueError(
            f"{name}: no column {missing[0]}: expected numeric columns {','.join(columns)}{also} "
            f"(in any order; others are ignored), found {','.join(map(str, available))}"
        )
    return list(columns)


def _from_pandas(frame, columns, name, rounding="exact", shift=None):
    """The named columns of a pandas DataFrame side by side as float32, as ``_from_arrow``
    reads Arrow data, with no pyarrow: a NaN is a value (refused as NaN), a missing value of
    a nullable column (``pd.NA``) is null."""
    import pandas as pd

    keys = {str(c): c for c in frame.columns}
    out = np.empty((len(frame), len(columns)), dtype=np.float32)
    for i, column in enumerate(_named(list(keys), columns, name)):
        values = frame[keys[column]]
        if not pd.api.types.is_numeric_dtype(values.dtype) or pd.api.types.is_bool_dtype(values.dtype):
            raise TypeError(f"{name}: column {column} is {values.dtype}, expected numbers")
        if not isinstance(values.dtype, np.dtype):
            # A nullable (extension) column: pd.NA is missing, not a number.
            nulls = values.isna().to_numpy()
            if nulls.any():
                raise ValueError(f"{_ROW.get(name, name)} {int(np.flatnonzero(nulls)[0])}: {column} is null")
            kind = "int64" if pd.api.types.is_integer_dtype(values.dtype) else "float64"
            values = values.to_numpy(dtype=kind)
        array = np.asarray(values).reshape(-1, 1)
        part = None if shift is None else shift[i : i + 1]
        out[:, i] = _to_float32(array, name, columns, rounding, column_offset=i, shift=part)[:, 0]
    return out

def _records(data, columns, name, copy=None, rounding="exact", origin=_NO_ORIGIN, moved=None):
    """``data`` as a float32 (N, len(columns)) C-order array: in place when it already is
    one (the zero-copy path), else converted exactly (``_to_float32``). ``copy=False`` refuses
    any conversion instead. ``origin``: subtracted from the coordinate columns first, in float64
    (``_shift``); ``moved``: where geometry's rounding is recorded (``_moved``)."""
    _check_rounding(rounding)
    shift = _shift(columns, origin)
    if _geometry.is_geometry(data):
        if tuple(columns) != SEGMENT_COLUMNS:
            raise TypeError(
                f"{name}: shapely geometry goes in as segments (line strings), walls or polygons=; "
                f"{name} take an array of {', '.join(columns)}"
            )
        # Line strings as their segments, their coordinates rounded to nearest (geometry.py).
        return _geometry.polylines(data, name, origin=origin, moved=moved).segments
    if _is_pandas(data):
        return _from_pandas(data, columns, name, rounding, shift)
    if _is_series(data):
        raise TypeError(
            f"{name}: a pandas Series; expected a DataFrame with columns {', '.join(columns)}, an "
            f"(N, {len(columns)}) array, or for segments shapely line strings"
        )
    if hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__"):
        return _from_arrow(data, columns, name, rounding, shift)
    if isinstance(data, (list, tuple)):
        # Rows of numbers, as np.asarray reads them.
        try:
            data = np.asarray(data)
        except ValueError as e:
            raise ValueError(f"{name}: rows of {len(columns)} numbers expected: {e}") from None
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
    if data.dtype == np.float32 and data.flags.c_contiguous and shift is None:
        # Read in place; only an unaligned buffer (as a deserialized one may be) is copied,
        # since Rust reads f32 values at aligned addresses.
        return data if data.flags.aligned else np.require(data, requirements=["C", "A"])
    _real(data, name)
    if copy is False:
        if shift is not None:
            raise TypeError(f"{name}: copy=False, but origin={origin} needs a shifted copy")
        raise TypeError(
            f"{name}: copy=False, but {data.dtype}"
            f"{'' if data.flags.c_contiguous else ' not in C order'} needs a copy to float32 in C order"
        )
    return _to_float32(data, name, columns, rounding, shift=shift)


def _shift(columns, origin):
    """What ``origin`` takes from each of ``columns`` (x from x0, min_x, cx; y likewise; 0 from
    a radius), float64; ``None`` for no shift."""
    if origin == _NO_ORIGIN:
        return None
    axis = [0 if c.startswith("x") or c.endswith("x") else 1 if c.startswith("y") or c.endswith("y") else None for c in columns]
    return np.array([0.0 if a is None else origin[a] for a in axis])


def _from_arrow(data, columns, name, rounding="exact", shift=None):
    """The named columns of Arrow data (a pyarrow table or batch, a pandas or polars
    DataFrame: anything with the Arrow PyCapsule interface), side by side as float32."""
    try:
        import pyarrow as pa
    except ImportError as e:
        raise ImportError(
            f"{name}: Arrow data ({type(data).__name__}) is read with pyarrow: pip install pyarrow"
        ) from e

    table = pa.table(data)
    out = np.empty((table.num_rows, len(columns)), dtype=np.float32)
    for i, column in enumerate(_named(table.column_names, columns, name)):
        values = table.column(column)
        if values.null_count:
            row = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
            raise ValueError(f"{_ROW.get(name, name)} {row}: {column} is null")
        if not (pa.types.is_floating(values.type) or pa.types.is_integer(values.type)):
            raise TypeError(f"{name}: column {column} is {values.type}, expected numbers")
        array = values.to_numpy().reshape(-1, 1)
        part = None if shift is None else shift[i : i + 1]
        out[:, i] = _to_float32(array, name, columns, rounding, column_offset=i, shift=part)[:, 0]
    return out


def _polygons(polygons, name, origin=_NO_ORIGIN, moved=None):
    """Polygons as the flat form the Rust module takes: vertices float32 (V, 2), offsets
    int64, and polygon offsets (int64, or ``None``: one ring each). From ``(vertices,
    offsets)`` (one ring each: P + 1 offsets), ``(vertices, ring_offsets, polygon_offsets)``
    (rings each, GeoArrow's form: R + 1 and P + 1 offsets), a sequence of rings, or shapely
    polygons and multipolygons (a GeoSeries, a GeoDataFrame: ``geometry.polygons``).
    ``origin``: subtracted from the vertices first, in float64."""
    if _geometry.is_geometry(polygons):
        return _geometry.polygons(polygons, name, origin=origin, moved=moved)
    if isinstance(polygons, tuple) and len(polygons) == 3 and polygons[2] is None:
        polygons = polygons[:2]
    if isinstance(polygons, tuple) and len(polygons) == 3 and np.ndim(polygons[2]) == 1:
        vertices, offsets = _polygons(polygons[:2], name, origin)[:2]
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
    if origin != _NO_ORIGIN:
        vertices = np.asarray(vertices, dtype=np.float64) - np.asarray(origin)
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
_MAYBE_INDEX = ("rect", *(shape["name"] for shape in _SHAPES.values()), "polygon", "target", *_EDGES)


def _check_output(to, ids):
    """``to`` and ``ids`` checked before any work."""
    if to not in OUTPUTS:
        raise ValueError(f'to: expected "numpy", "arrow", "pandas" or "geopandas", found {to!r}')
    if ids is not None and to == "numpy":
        raise TypeError('ids: a numpy result\'s fields are fixed; pass to="pandas", "arrow" or "geopandas"')


def _column_names(ids, segments):
    """Whether ``ids`` names columns of the segments: one string, or a list of strings each a
    column of the segments' DataFrame or table (else, strings are one id per segment)."""
    if isinstance(ids, str):
        return True
    if not (isinstance(ids, (list, tuple)) and ids and all(isinstance(i, str) for i in ids)):
        return False
    if hasattr(segments, "columns"):
        available = set(map(str, segments.columns))
    elif hasattr(segments, "column_names"):
        available = set(segments.column_names)
    else:
        return False
    return all(i in available for i in ids)


def _ids(ids, segments, count):
    """The id columns to carry into the rows, by segment: ``{name: values}`` (``None``: none).
    ``ids`` names columns of the segments (a pandas DataFrame or Arrow data), or is a
    sequence of one id per segment (the column ``id``)."""
    if ids is None:
        return None
    if _column_names(ids, segments):
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


def _segments(segments, ids, copy, rounding, origin=_NO_ORIGIN, moved=None):
    """The segments as float32 (N, 4), less ``origin``, and the id columns their rows carry
    (``_ids``). Line strings give their segments, each row naming its line and its place in
    it."""
    if _geometry.is_geometry(segments) and not (isinstance(segments, Polylines) and origin != _NO_ORIGIN):
        lines = _geometry.polylines(segments, "segments", origin=origin, moved=moved)
        return lines.segments, _line_ids(ids, segments, lines)
    if isinstance(segments, Polylines):
        # Already float32, in their own frame: shifted as an array is.
        s = _records(segments.segments, SEGMENT_COLUMNS, "segments", copy, rounding, origin)
        return s, _line_ids(ids, segments, segments)
    s = _records(segments, SEGMENT_COLUMNS, "segments", copy, rounding, origin)
    return s, _ids(ids, segments, len(s))


def _line_ids(ids, segments, lines):
    """The columns line strings carry into the rows, by segment: ``ids`` (as ``_ids`` takes
    them, but one per line: column names of a GeoDataFrame, or a sequence), then ``line`` (the
    row's label, or its number) and ``line_segment``."""
    columns = {}
    if _column_names(ids, segments):
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


def _table(
    packed, to: str, categories=None, ids=None, segments=None, crs=None, geometry=None, labels=None,
    shift=None, polygons=None, attributes=None, absent=None,
):
    """The packed rows from the Rust module as a numpy structured array (a view of its bytes,
    no copy), an Arrow batch, a pandas DataFrame or a GeoDataFrame (``categories``: the names
    of the codes of each category field, by field; ``kind`` as rects' by default), with
    ``ids`` (from ``_ids``) joined on the ``segment`` column. A GeoDataFrame's geometry is
    ``geometry`` where given, else comes from the rows and ``segments`` (``_hit_geometry``;
    ``polygons``: the flat polygons the rows are against, for the pieces inside them), in
    ``crs``. ``labels``: (field, the targets' index labels), carried as ``{field}_index``
    beside the target's number (null where there is none). ``attributes``: a DataFrame of
    the targets' own columns, one row per target, beside the rows (counts). ``absent``: by
    category field, the rows that have none (a query over several kinds). ``shift``: the
    ``origin`` the inputs were shifted by, whose coordinates (a clip's) go back to the
    user's frame as float64, and the ``displacement`` rounding caused; both in a pandas
    frame's ``attrs``."""
    data, descr = packed
    rows = data.view(np.dtype(list(descr)))
    origin = _NO_ORIGIN if shift is None else shift["origin"]
    if origin != _NO_ORIGIN:
        rows = _unshifted(rows, origin)
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

        batch = _arrow(rows, categories, absent)
        for i, (name, values) in enumerate((ids or {}).items()):
            batch = batch.add_column(i, name, pa.array(np.take(values, rows["segment"])))
        if labels is not None:
            batch = batch.add_column(at + len(ids or {}), f"{field}_index", pa.array(labelled, mask=missing))
        return batch
    import pandas as pd

    frame = pd.DataFrame(rows) if to == "frame" else _pandas(rows, categories, absent)
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
    if attributes is not None:
        for name in attributes.columns:
            frame[f"{name}_target" if name in frame.columns else name] = attributes[name].array
    if shift is not None and (origin != _NO_ORIGIN or shift["displacement"] is not None or "skipped" in shift):
        frame.attrs.update(shift)
    if to == "geopandas":
        import geopandas

        if geometry is None:
            geometry = _hit_geometry(rows, segments, origin, polygons)
        out = geopandas.GeoDataFrame(frame, geometry=geometry, crs=crs)
        out.attrs.update(frame.attrs)
        return out
    return frame


#: A clip's coordinate fields, which go back to the user's frame.
_COORDINATES = ("x0", "y0", "x1", "y1")


def _unshifted(rows, origin):
    """Rows whose coordinate fields (a clip's) were in a frame shifted by ``origin``, with
    those fields back in the user's frame, as float64 (float32 would lose what the shift
    kept); other rows as they are."""
    if not set(_COORDINATES) <= set(rows.dtype.names):
        return rows
    dtype = [(name, np.float64 if name in _COORDINATES else rows.dtype[name]) for name in rows.dtype.names]
    out = np.empty(len(rows), dtype=dtype)
    for name in rows.dtype.names:
        out[name] = rows[name]
    for name in _COORDINATES:
        out[name] += origin[0] if name.startswith("x") else origin[1]
    return out


def _hit_geometry(rows, segments, origin=_NO_ORIGIN, polygons=None):
    """Each row's geometry, for a GeoDataFrame, in the user's frame: a clip's segment (x0, y0,
    x1, y1), or the part of the row's segment from t_enter to t_exit (a point where they are
    equal); ``None`` on a miss. Points are computed in float64 from the rounded t (rounded to
    float32 in the inputs' frame, then moved back by ``origin``): geometry to draw and join,
    within an ulp or two of the true points, not exact (the t are).

    Against ``polygons`` (the flat form the rows were answered on), a segment that meets a
    polygon with holes, of several parts, or not convex may leave it and come back: there the
    geometry is the segment's pieces inside (GEOS's intersection, a MultiLineString, or with a
    touch a GeometryCollection), as ``shapely.intersection`` gives for the same polygon; from
    t_enter to t_exit where GEOS, rounding, finds none."""
    import shapely

    names = rows.dtype.names
    if set(_COORDINATES) <= set(names):
        ends = np.stack([rows[c] for c in _COORDINATES], axis=1).astype(np.float64)
    elif {"segment", "t_enter", "t_exit"} <= set(names) and segments is not None:
        s = segments[rows["segment"]].astype(np.float64)
        start, step = s[:, :2], s[:, 2:] - s[:, :2]
        ends = np.hstack([start + rows["t_enter"][:, None] * step, start + rows["t_exit"][:, None] * step])
        # At the inputs' precision, in the user's frame.
        ends = ends.astype(np.float32).astype(np.float64) + np.tile(origin, 2)
    else:
        raise TypeError(f'to="geopandas": these rows ({", ".join(names)}) have no geometry; pass to="pandas"')
    geometry = np.full(len(rows), None, dtype=object)
    hit = ~np.isnan(ends).any(axis=1)
    point = hit & (ends[:, 0] == ends[:, 2]) & (ends[:, 1] == ends[:, 3])
    line = hit & ~point
    with _collector_paused():
        geometry[point] = shapely.points(ends[point, :2])
        geometry[line] = shapely.linestrings(ends[line].reshape(-1, 2, 2))
        if polygons is not None and "polygon" in names:
            _pieces_inside(geometry, rows, segments, origin, polygons, line)
    return geometry


class _collector_paused:
    """Python's cycle collector paused while a million geometries are made: each one is a new
    object, and the collections they set off walk every live one (1.27M lines beside 2M live
    objects, this 2-core machine, 4 runs each: 0.57–0.78 s with it, 0.28–0.37 s without).
    Geometries hold no cycles; the collector runs again as it was."""

    def __enter__(self):
        import gc

        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *_):
        import gc

        if self.was:
            gc.enable()


def _pieces_inside(geometry, rows, segments, origin, polygons, line):
    """``geometry``'s rows (``line``: those whose hit spans a length) against a polygon that
    a segment may leave and enter again (``_simple_convex`` says which cannot), replaced by
    their segment's intersection with that polygon, where GEOS finds one."""
    import shapely

    polygon = rows["polygon"].astype(np.int64)
    vertices, offsets, polygon_offsets, kept = polygons
    if kept is not None:
        # The rows number the polygons as given; the arrays hold those left in.
        size = max(int(polygon.max(initial=-1)), int(kept[-1]) if len(kept) else -1) + 1
        position = np.full(size, -1, dtype=np.int64)
        position[kept] = np.arange(len(kept))
        polygon = np.where(polygon >= 0, position[np.maximum(polygon, 0)] if size else -1, -1)
    if polygon_offsets is None:
        polygon_offsets = np.arange(len(offsets), dtype=np.int64)
    rows_to_do = np.flatnonzero(line & ~_simple_convex(vertices, offsets, polygon_offsets)[np.maximum(polygon, 0)])
    if len(rows_to_do) == 0:
        return
    wanted, which = np.unique(polygon[rows_to_do], return_inverse=True)
    shapes = _shapely_polygons(vertices, offsets, polygon_offsets, wanted, origin)
    ends = segments[rows["segment"][rows_to_do]].astype(np.float64) + np.tile(origin, 2)
    pieces = shapely.intersection(shapely.linestrings(ends.reshape(-1, 2, 2)), shapes[which])
    found = ~shapely.is_empty(pieces)
    geometry[rows_to_do[found]] = pieces[found]


def _simple_convex(vertices, offsets, polygon_offsets):
    """By polygon: whether it is one convex ring, which a segment cannot leave and enter
    again. Exact: each turn's cross product of float32 differences, in float64."""
    rings = np.diff(polygon_offsets)
    sizes = np.diff(offsets)
    if len(vertices) == 0:
        return rings == 1
    v = vertices.astype(np.float64)
    ring_of = np.repeat(np.arange(len(sizes)), sizes)
    index = np.arange(len(v))
    # Each vertex's next and the one after, within its ring.
    def after(i, by):
        return offsets[ring_of[i]] + (i - offsets[ring_of[i]] + by) % sizes[ring_of[i]]

    a, b = v[after(index, 1)] - v, v[after(index, 2)] - v[after(index, 1)]
    cross = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    left = np.zeros(len(sizes), dtype=bool)
    right = np.zeros(len(sizes), dtype=bool)
    np.logical_or.at(left, ring_of, cross > 0)
    np.logical_or.at(right, ring_of, cross < 0)
    convex_ring = ~(left & right)
    first_ring = polygon_offsets[:-1]
    one = rings == 1
    out = np.zeros(len(rings), dtype=bool)
    out[one] = convex_ring[first_ring[one]]
    return out


def _ranges(starts, stops):
    """The integers of each range [starts[i], stops[i]), one range after the other."""
    lengths = stops - starts
    return np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())


def _shapely_polygons(vertices, offsets, polygon_offsets, wanted, origin):
    """Polygons ``wanted`` of the flat form, as shapely geometry in the user's frame: each
    polygon's first ring its shell, the others its holes, made valid where they are other
    parts or islands (the region inside an odd number of rings, as the engine answers)."""
    import shapely

    first, last = polygon_offsets[wanted], polygon_offsets[wanted + 1]
    ring_ids = _ranges(first, last)
    ring_polygon = np.repeat(np.arange(len(wanted)), last - first)
    sizes = offsets[ring_ids + 1] - offsets[ring_ids]
    vertex_ids = _ranges(offsets[ring_ids], offsets[ring_ids + 1])
    points = vertices[vertex_ids].astype(np.float64) + np.asarray(origin)
    rings = shapely.linearrings(points, indices=np.repeat(np.arange(len(ring_ids)), sizes))
    shapes = shapely.polygons(rings, indices=ring_polygon)
    invalid = ~shapely.is_valid(shapes)
    shapes[invalid] = shapely.make_valid(shapes[invalid])
    return shapes


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


def _null_codes(rows, field, categories, absent):
    """The codes of category field ``field`` and its names, -1 where a row has none: where
    ``absent`` (by field) says so, and code 0 where its first name is ``None``."""
    codes = rows[field].astype(np.int16)
    names = list(categories[field])
    if names[0] is None:
        codes, names = codes - 1, names[1:]
    if absent is not None and field in absent:
        codes[absent[field]] = -1
    return codes, names


def _pandas(rows: np.ndarray, categories, absent=None):
    """The rows as a pandas DataFrame: categories (kind, contact) and sides categorical (NaN
    where there is none, and where ``absent``, by field, says a row has none), indices
    signed: a target's ``Int64`` in every query (``<NA>`` on a miss), ``segment`` and the
    others int64; t NaN on a miss."""
    import pandas as pd

    columns = {}
    for field in rows.dtype.names:
        values = rows[field]
        if field in categories:
            codes, names = _null_codes(rows, field, categories, absent)
            columns[field] = pd.Categorical.from_codes(codes, categories=names)
        elif field in ("entry", "exit"):
            codes = values.astype(np.int16)
            codes[codes == 0] = -1
            columns[field] = pd.Categorical.from_codes(codes, categories=list(SIDE_NAMES))
        elif field in _MAYBE_INDEX and values.dtype.kind in "iu":
            # One signed, nullable dtype for a target's index in every query's rows.
            signed = np.ascontiguousarray(values, dtype=np.int64)
            columns[field] = pd.arrays.IntegerArray(signed, signed < 0)
        elif values.dtype == np.uint64:
            # Signed, as numpy's arithmetic with other integers wants (uint64 + int64 is float64).
            columns[field] = np.ascontiguousarray(values, dtype=np.int64)
        else:
            columns[field] = np.ascontiguousarray(values)
    return pd.DataFrame(columns)


def _arrow(rows: np.ndarray, categories, absent=None):
    """The CLI's Parquet columns: indices uint64, t and coordinates float32, categories (kind,
    contact) and sides as names; null where the CSV output is empty (a miss, and where
    ``absent``, by field, says a row has none)."""
    import pyarrow as pa

    sides = pa.array([s or None for s in SIDE_NAMES], type=pa.string())
    arrays = []
    for field in rows.dtype.names:
        values = np.ascontiguousarray(rows[field])
        if field in categories:
            codes, names = _null_codes(rows, field, categories, absent)
            array = pa.array(names, type=pa.string()).take(pa.array(codes, mask=codes < 0))
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


def _invalid_polygon(error, labels):
    """The library's error for an invalid polygon (``polygon 2: ring is not simple: …``), with
    the polygon's label (a GeoDataFrame's index) and what to do: repair it, or skip it."""
    import re

    found = re.match(r"polygon (\d+): ", str(error))
    if not found:
        return error
    i = int(found.group(1))
    label = f" (label {labels[i]!r})" if labels is not None and i < len(labels) else ""
    return ValueError(
        f"polygons: polygon {i}{label}: {str(error)[found.end():]}; shapely.make_valid repairs "
        f"such a polygon, and skip_invalid=True answers it as missing everything"
    )


def _given_targets(query, rects, polygons, shapes):
    """The targets a query was given, by keyword in ``target_kind`` order (``rects``, the
    registered shapes' keywords in ``SHAPES`` among ``shapes``, ``polygons``): at least one."""
    unknown = [keyword for keyword in shapes if keyword not in _SHAPES]
    if unknown:
        options = inspect.signature(getattr(Engine, query)).parameters
        options = [p for p in options if p not in ("self", "segments", "rects", "polygons", "shapes")]
        raise TypeError(
            f"{query}: unexpected keyword {unknown[0]!r}: it takes {', '.join(options)}, and the "
            f"targets rects, polygons and the shapes {', '.join(SHAPES)}"
        )
    values = {"rects": rects, **{keyword: shapes.get(keyword) for keyword in SHAPES}, "polygons": polygons}
    given = {keyword: values[keyword] for keyword in _TARGET_KEYWORDS if values[keyword] is not None}
    if not given:
        raise TypeError(f"{query}: give one or more of {', '.join(['rects', *SHAPES, 'polygons'])}; found none")
    return given


def _one_target(query, rects, polygons, shapes):
    """The one target a query was given, as (its keyword, its value): ``rects``, ``polygons``
    or a registered shape's keyword (``SHAPES``) among ``shapes``. Several are a
    ``TypeError`` here (the Dask functions take one kind)."""
    given = _given_targets(query, rects, polygons, shapes)
    if len(given) != 1:
        raise TypeError(
            f"{query}: give one of {', '.join(['rects', *SHAPES, 'polygons'])} here; found {', '.join(given)} "
            f"(rectcast.{query} takes several at once)"
        )
    return next(iter(given.items()))


class _Target:
    """A query's one target (``rects``, ``polygons`` or a registered shape's keyword in
    ``shapes``), converted once: its keyword, the arrays the Rust module takes, and from
    geopandas its index labels (polygons: carried as ``polygon_index``), and for counts in
    pandas or geopandas its other columns (``attributes``) and its geometry (counts drawn on
    polygons); its CRS; the ``origin`` its coordinates were shifted by, and how far rounding
    moved its geometry (``moved``). Picklable: the Dask functions send it to each worker."""

    __slots__ = (
        "keyword", "arrays", "labels", "geometry", "attributes", "crs", "origin", "moved", "skip_invalid",
        "skipped", "kept", "count",
    )

    def __init__(
        self, query, rects, polygons, shapes, copy, rounding, to="numpy", origin=_NO_ORIGIN, skip_invalid=False,
    ):
        keyword, value = _one_target(query, rects, polygons, shapes)
        self.keyword = keyword
        self.crs = getattr(value, "crs", None)
        self.labels = self.geometry = self.attributes = None
        self.origin = origin
        self.moved = []
        if keyword == "rects":
            self.arrays = _records(value, RECT_COLUMNS, "rects", copy, rounding, origin, self.moved)
        elif keyword == "polygons":
            self.arrays = _polygons(value, "polygons", origin, self.moved)
            # A GeoSeries' or GeoDataFrame's index, carried beside each polygon's number.
            if type(value).__module__.startswith("geopandas"):
                self.labels = value.index
            if query == "counts" and to in ("pandas", "geopandas") and hasattr(value, "geometry") and hasattr(value, "columns"):
                # A GeoDataFrame's own columns, beside each polygon's count.
                self.attributes = value.drop(columns=value.geometry.name).reset_index(drop=True)
            if query == "counts" and to == "geopandas" and _geometry.is_geometry(value):
                self.geometry = _geometry.geometries(value, "polygons")
        else:
            columns = _SHAPES[keyword]["columns"]
            self.arrays = _records(value, columns, keyword, copy, rounding, origin, self.moved)
        # With skip_invalid, the invalid targets left out (rectcast/skipping.py): ``kept``, the
        # indices of those left in, of ``count``; ``skipped``, (index, reason) each.
        self.skip_invalid = bool(skip_invalid)
        self.count = _skipping._count(keyword, self.arrays)
        self.skipped, self.kept = [], None
        if self.skip_invalid:
            self.skipped = _skipping.invalid(keyword, self.arrays)
            if self.skipped:
                bad = [i for i, _ in self.skipped]
                self.arrays, self.kept = _skipping.kept(keyword, self.arrays, bad)

    @property
    def skipped_by_input(self):
        """What was skipped, by input: this target's keyword and its (index, reason) each."""
        return {self.keyword: self.skipped}

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


class _Mixed:
    """A query's several kinds of target (``given``: by keyword, in ``target_kind`` order),
    each a :class:`_Target` converted once, asked as one scene; its CRS, the ``origin`` all
    are shifted by, and how far rounding moved them. Picklable, as ``_Target`` is."""

    __slots__ = ("targets", "keyword", "crs", "origin", "moved", "skip_invalid")

    def __init__(self, query, given, copy, rounding, to="numpy", origin=_NO_ORIGIN, skip_invalid=False):
        if to == "geopandas":
            raise ValueError(
                f"{query}: to='geopandas' takes one kind of target; with several "
                f"({', '.join(given)}) ask to='pandas' or 'arrow'"
            )
        self.crs = _crs(*given.items())
        self.targets = {
            keyword: _Target(
                query, value if keyword == "rects" else None, value if keyword == "polygons" else None,
                {keyword: value} if keyword in _SHAPES else {}, copy, rounding, to, origin, skip_invalid,
            )
            for keyword, value in given.items()
        }
        self.keyword = "targets"
        self.origin = origin
        self.moved = [m for target in self.targets.values() for m in target.moved]
        self.skip_invalid = bool(skip_invalid)

    @property
    def skipped_by_input(self):
        return {keyword: target.skipped for keyword, target in self.targets.items()}

    def __getstate__(self):
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state):
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
      values float32 cannot hold instead of refusing them;
    - ``origin``: the (x, y) subtracted from every coordinate, in float64, before rounding to
      float32, so that geometry far from (0, 0) keeps its precision. ``"auto"`` (the default):
      where the segments and targets are all shapely or geopandas geometry, the targets'
      bounds' centre in whole units, on an axis where they lie farther from 0 than their size
      (else no shift); ``None``: no shift; ``(x, y)``: every input shifted, arrays by their
      ``rounding`` rule. The t do not change; geometry and a clip's coordinates (then float64)
      come back in the inputs' frame. Pandas and geopandas rows carry ``attrs["origin"]`` and
      ``attrs["displacement"]`` (the farthest geometry's rounding moved a vertex), which warns
      (``RoundingWarning``) above ``DISPLACEMENT_BOUND`` of the inputs' extent.
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

    def _query(
        self, query, segments, rects, polygons, shapes, to, copy, rounding, ids, origin, skip_invalid=False,
        progress=None,
    ):
        """``query`` against the one target given (``rects``, ``polygons`` or a registered
        shape's keyword in ``shapes``), its rows as ``to`` asks."""
        _check_output(to, ids)
        given = _given_targets(query, rects, polygons, shapes)
        if len(given) > 1:
            origin = _origin(origin, segments, *given.values())
            target = _Mixed(query, given, copy, rounding, to, origin, skip_invalid)
            return self._run(query, segments, target, to, copy, rounding, ids, progress)
        keyword, value = next(iter(given.items()))
        crs = _crs(("segments", segments), (keyword, value))
        origin = _origin(origin, segments, value)
        target = _Target(query, rects, polygons, shapes, copy, rounding, to, origin, skip_invalid)
        return self._run(query, segments, target, to, copy, rounding, ids, progress)

    def _run(self, query, segments, target, to, copy, rounding, ids, progress=None):
        """``query`` against a :class:`_Target`, its rows as ``to`` asks (``"frame"``: the
        numpy rows as a pandas DataFrame, with the id columns and labels the pandas form
        has); the segments in the target's frame (its ``origin``)."""
        crs = _crs(("segments", segments), (target.keyword, target))
        moved = []
        s, joined = _segments(segments, ids, copy, rounding, target.origin, moved)
        return self._rows_of(query, s, joined, crs, target, to, moved, progress)

    @staticmethod
    def _skipping(s, target):
        """Where the target skips invalid inputs (rectcast/skipping.py): the valid segments,
        the indices of those among all (``None`` where none was left out), and what was
        skipped, by input; else ``s``, ``None``, ``None``."""
        if not target.skip_invalid:
            return s, None, None
        bad = _skipping.invalid("segments", s)
        kept = None
        if bad:
            s, kept = _skipping.kept("segments", s, [i for i, _ in bad])
        skipped = {"segments": bad, **target.skipped_by_input}
        _skipping.say(skipped)
        return s, kept, {name: [i for i, _ in found] for name, found in skipped.items()}

    def _rows_of(self, query, s, joined, crs, target, to, moved=(), progress=None):
        """``query`` of segments ``s`` (float32 (N, 4), in the target's frame) against a
        :class:`_Target`, the rows joined with ``joined`` (from ``_segments``) and as ``to``
        asks, in ``crs``; ``moved``: how far the segments' rounding moved them, said with the
        target's (``_said_displacement``)."""
        shift = {
            "origin": target.origin,
            "displacement": _said_displacement([*moved, *target.moved], target.origin),
        }
        given = s
        s, segments_kept, skipped = self._skipping(s, target)
        if skipped is not None:
            shift["skipped"] = skipped
        if query == "counts":
            # Rows by target: nothing to join by segment.
            joined = None

        def renumbered(rows, field):
            # Numbered as the inputs are, where invalid ones were left out.
            if target.kept is None and segments_kept is None:
                return rows
            data, descr = rows
            found = data.view(np.dtype(list(descr)))
            out = _skipping.renumbered(found, field, target.kept, segments_kept)
            return out.view(np.uint8), descr

        if isinstance(target, _Mixed):
            return self._mixed_rows(query, s, joined, given, crs, target, to, shift, segments_kept, progress)
        if target.keyword == "rects":
            run = getattr(self._engine, query)
            rows = renumbered(_progress.rows(lambda part: run(part, target.arrays), s, query, progress), "rect")
            return _table(rows, to, ids=joined, segments=given, crs=crs, shift=shift)
        if target.keyword == "polygons":
            try:
                run = self._engine.polygon_query
                found = _progress.rows(lambda part: run(query, part, *target.arrays), s, query, progress)
                rows = renumbered(found, "polygon")
            except ValueError as e:
                raise _invalid_polygon(e, target.labels) from None
            labels = None if target.labels is None else ("polygon", target.labels)
            if query == "counts":
                # Hits per polygon, beside the polygons' own columns, on their own geometry
                # (those of the polygons counted: a skipped one has no row).
                geometry, attributes = target.geometry, target.attributes
                if target.kept is not None:
                    geometry = None if geometry is None else geometry[target.kept]
                    attributes = None if attributes is None else attributes.iloc[target.kept].reset_index(drop=True)
                return _table(
                    rows, to, crs=crs, geometry=geometry, labels=labels, shift=shift, attributes=attributes,
                )
            pieces = (*target.arrays, target.kept)
            return _table(rows, to, ids=joined, segments=given, crs=crs, labels=labels, shift=shift, polygons=pieces)
        shape = _SHAPES[target.keyword]
        run = self._engine.shape_query
        found = _progress.rows(lambda part: run(query, target.keyword, part, target.arrays), s, query, progress)
        rows = renumbered(found, shape["name"])
        return _table(rows, to, {shape["category"]: shape["category_names"]}, joined, given, crs, shift=shift)

    def _mixed_rows(self, query, s, joined, given, crs, target, to, shift, segments_kept, progress):
        """``query`` of segments ``s`` (valid, in the targets' frame; ``segments_kept``: their
        indices among ``given``'s where some were skipped) against several kinds at once (a
        :class:`_Mixed`), as one scene: the CLI's rows of a mixed job."""
        arrays = {keyword: t.arrays for keyword, t in target.targets.items()}
        run = self._engine.mixed_query
        data, descr = _progress.rows(lambda part: run(query, part, **arrays), s, query, progress)
        rows = data.view(np.dtype(list(descr)))
        kept = [target.targets[k].kept if k in target.targets else None for k in _TARGET_KEYWORDS]
        if segments_kept is not None or any(k is not None for k in kept):
            # Numbered as the inputs are, where invalid ones were left out.
            rows = rows.copy()
            if segments_kept is not None and "segment" in rows.dtype.names:
                rows["segment"] = segments_kept[rows["segment"].astype(np.int64)]
            for code, keep in enumerate(kept, 1):
                if keep is not None:
                    mine = rows["target_kind"] == code
                    rows["target"][mine] = keep[rows["target"][mine].astype(np.int64)]
        # A row's categories of other kinds are absent: null in pandas and Arrow.
        kinds = rows["target_kind"]
        absent = {
            field: ~np.isin(kinds, [code for code, (_, fields) in enumerate(_TARGET_KINDS, 1) if field in fields])
            for field in ("kind", "contact")
        }
        categories = {"target_kind": TARGET_KIND_NAMES, "kind": CIRCLE_KIND_NAMES, "contact": CONTACT_NAMES}
        return _table((rows.view(np.uint8), descr), to, categories, joined, given, crs, shift=shift, absent=absent)

    def pairs(
        self, segments, rects=None, *, polygons=None, to: str = "numpy", copy: bool | None = None,
        rounding: str = "exact", ids=None, origin="auto", skip_invalid: bool = False, progress=None, **shapes,
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
        return self._query(
            "pairs", segments, rects, polygons, shapes, to, copy, rounding, ids, origin, skip_invalid, progress,
        )

    def first_hit(
        self, segments, rects=None, *, polygons=None, to: str = "numpy", copy: bool | None = None,
        rounding: str = "exact", ids=None, origin="auto", skip_invalid: bool = False, progress=None, **shapes,
    ):
        """The closest hit of each segment: the exact earliest entry; an exact tie to the
        lower kind (rect, circle, wall, polygon), then the lowest index.

        One row per segment: segment, rect (int64, -1 on a miss), kind (0 on a miss),
        t_enter, t_exit (NaN on a miss), entry, exit. With ``walls=`` or ``circles=``: fields
        segment, wall or circle (-1 on a miss), contact or kind, t_enter, t_exit; with
        ``polygons=``: segment, polygon, kind, t_enter, t_exit, entry_edge, exit_edge,
        entry_ring, exit_ring. Several kinds at once (any mix of ``rects``, ``walls=``,
        ``circles=``, ``polygons=``, here and in ``pairs``, ``hits`` and ``counts``): fields
        segment, target_kind (``TARGET_KIND_NAMES``), target, then every kind's fields, a
        row's other kinds' absent: the CLI's rows of a mixed job."""
        return self._query(
            "first_hit", segments, rects, polygons, shapes, to, copy, rounding, ids, origin, skip_invalid, progress,
        )

    def hits(
        self, segments, rects=None, *, polygons=None, to: str = "numpy", copy: bool | None = None,
        rounding: str = "exact", ids=None, origin="auto", skip_invalid: bool = False, progress=None, **shapes,
    ):
        """Only the hitting pairs, in (segment, rect) order, with the fields of ``pairs``."""
        return self._query(
            "hits", segments, rects, polygons, shapes, to, copy, rounding, ids, origin, skip_invalid, progress,
        )

    def counts(
        self, segments, rects=None, *, polygons=None, to: str = "numpy", copy: bool | None = None,
        rounding: str = "exact", origin="auto", skip_invalid: bool = False, progress=None, **shapes,
    ):
        """Hits per rect: one row (rect, hits) per rect; (wall, hits), (circle, hits) or
        (polygon, hits) with ``walls=``, ``circles=`` or ``polygons=``."""
        return self._query(
            "counts", segments, rects, polygons, shapes, to, copy, rounding, None, origin, skip_invalid, progress,
        )

    def wall_pairs(
        self, segments, walls, *, to: str = "numpy", copy: bool | None = None, rounding: str = "exact", ids=None,
        origin="auto", skip_invalid: bool = False, progress=None,
    ):
        """Segment x segment: every segment against every wall (both x0, y0, x1, y1), one row
        per pair, segment-major. Fields: segment, wall (uint64), hit (bool), contact (uint8, a
        ``CONTACT_NAMES`` code), t_enter, t_exit (float32 along the segment, NaN on a miss)."""
        return self.pairs(
            segments, walls=walls, to=to, copy=copy, rounding=rounding, ids=ids, origin=origin, skip_invalid=skip_invalid,
            progress=progress,
        )

    def circle_pairs(
        self, segments, circles, *, to: str = "numpy", copy: bool | None = None, rounding: str = "exact", ids=None,
        origin="auto", skip_invalid: bool = False, progress=None,
    ):
        """Segment x circle: every segment against every closed disk (cx, cy, r, r >= 0), one
        row per pair, segment-major. Fields: segment, circle (uint64), hit (bool), kind (uint8,
        a ``CIRCLE_KIND_NAMES`` code), t_enter, t_exit (float32 along the segment, NaN on a
        miss)."""
        return self.pairs(
            segments, circles=circles, to=to, copy=copy, rounding=rounding, ids=ids, origin=origin, skip_invalid=skip_invalid,
            progress=progress,
        )

    def polygon_pairs(
        self, segments, polygons, *, to: str = "numpy", copy: bool | None = None, rounding: str = "exact", ids=None,
        origin="auto", skip_invalid: bool = False, progress=None,
    ):
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
        return self.pairs(
            segments, polygons=polygons, to=to, copy=copy, rounding=rounding, ids=ids, origin=origin, skip_invalid=skip_invalid,
            progress=progress,
        )

    def overlaps(self, polygons, other, *, to: str = "numpy", origin="auto"):
        """Polygon × polygon: the overlapping pairs (closed: touching and containment count),
        fields polygon and other (uint64), in order. Both in ``polygon_pairs``' forms."""
        _check_output(to, None)
        origin = _origin(origin, polygons, polygons, other)
        moved = []
        a = _polygons(polygons, "polygons", origin, moved)
        b = _polygons(other, "other", origin, moved)
        shift = {"origin": origin, "displacement": _said_displacement(moved, origin)}
        return _table(self._engine.overlaps(*a, *b), to, shift=shift)

    def first_hit_rects(
        self, segments, rects, *, copy: bool | None = None, rounding: str = "exact", origin="auto",
    ) -> np.ndarray:
        """Each segment's first-hit rect alone, ``first_hit``'s ``rect`` column: an int64 array,
        -1 on a miss. On a GPU only 4 bytes a segment come back."""
        origin = _origin(origin, segments, rects)
        moved = []
        s = _records(segments, SEGMENT_COLUMNS, "segments", copy, rounding, origin, moved)
        r = _records(rects, RECT_COLUMNS, "rects", copy, rounding, origin)
        _said_displacement(moved, origin)
        return self._engine.first_hit_rects(s, r)

    def clip(
        self, segments, rect=None, *, rects=None, to: str = "numpy", copy: bool | None = None,
        rounding: str = "exact", ids=None, origin="auto",
    ):
        """Each segment clipped to ``rect`` (4 values: min_x, min_y, max_x, max_y), or to its
        own row of ``rects``. Fields: segment, kind, x0, y0, x1, y1 (NaN on a miss; float64
        where an ``origin`` shifted the inputs, back in the user's frame)."""
        _check_output(to, ids)
        if (rect is None) == (rects is None):
            raise TypeError("clip: give rect or rects")
        origin = _origin(origin, segments, rects if rect is None else rect)
        moved = []
        s, joined = _segments(segments, ids, copy, rounding, origin, moved)
        shift = {"origin": origin, "displacement": _said_displacement(moved, origin)}
        if rect is not None:
            one = np.asarray(rect)
            if one.shape != (4,):
                raise ValueError(
                    f"rect: expected 4 values ({', '.join(RECT_COLUMNS)}), found shape {one.shape}"
                )
            one = _records(one.reshape(1, 4), RECT_COLUMNS, "rect", copy, rounding, origin)
            rows = self._engine.clip(s, one, False)
            return _table(rows, to, ids=joined, crs=_crs(("segments", segments)), shift=shift)
        r = _records(rects, RECT_COLUMNS, "rects", copy, rounding, origin)
        if len(r) != len(s):
            raise ValueError(
                f"rects: clipping to one rect per segment needs as many rects as segments: "
                f"{len(s)} segments, {len(r)} rects"
            )
        return _table(self._engine.clip(s, r, True), to, ids=joined, crs=_crs(("segments", segments)), shift=shift)


#: What every query's docstring ends with: its inputs' forms and its options, so that
#: ``help(rectcast.hits)`` says them (not only ``help(rectcast.Engine)``).
_QUERY_OPTIONS = """

        Inputs: ``segments`` (x0, y0, x1, y1) and the targets (``rects``: min_x, min_y, max_x,
        max_y, or geopandas' ``.bounds`` names; ``circles=``: cx, cy, r; ``walls=``: as
        segments; ``polygons=``: rings, the flat form, or shapely polygons) as a float32 array
        of shape (N, k) in C order (read in place, no copy), any other real array or list of
        rows (converted exactly, see ``rounding``), a pandas DataFrame or Arrow data with those
        columns, or shapely and geopandas geometry (line strings as their segments, each row
        naming its ``line`` and ``line_segment``; polygons with holes and multipolygons).

        Options:

        - ``to``: ``"numpy"`` (a structured array, the CLI's ``.npy`` rows, no copy),
          ``"arrow"`` (a ``pyarrow.RecordBatch``), ``"pandas"`` (categorical kinds, nullable
          indices) or ``"geopandas"`` (a GeoDataFrame: each row's geometry the part of its
          segment hit, in the inputs' CRS);
        - ``ids``: with ``"pandas"``, ``"arrow"`` or ``"geopandas"``, columns carried into the
          rows by segment: a column name (or names) of the segments' frame, or one id per
          segment;
        - ``copy``: ``False`` refuses any copy; ``rounding``: ``"exact"`` (the default) refuses a
          value float32 cannot hold, naming it, ``"nearest"`` rounds it and warns;
        - ``origin``: ``"auto"`` (the default), ``None`` or ``(x, y)``: subtracted, in float64,
          before rounding, so that geometry far from (0, 0) keeps its precision (``Engine``).
        """

#: The option the queries over targets add.
_SKIP_OPTION = """        - ``skip_invalid``: ``True`` answers invalid segments (NaN, beyond ±2^62) and targets
          (min above max, a ring that is not simple) as left out instead of raising: no rows
          of theirs, the others numbered as the inputs (the CLI's ``--skip-invalid``), said
          once (``SkippedWarning``) and in pandas rows' ``attrs["skipped"]``
          (rectcast/skipping.py);
        - ``progress``: ``True`` says a long call's progress (a tqdm bar where tqdm is installed,
          else a line on stderr), a callable is called with (segments done, segments in all);
          the segments then go to the engine in batches of 65,536 or more, the same rows
          (rectcast/progress.py).
        """

for _name in ("pairs", "first_hit", "hits", "counts", "wall_pairs", "circle_pairs", "polygon_pairs", "clip"):
    _method = getattr(Engine, _name)
    _options = _QUERY_OPTIONS if _name == "clip" else _QUERY_OPTIONS + _SKIP_OPTION
    _method.__doc__ = (_method.__doc__ or "") + _options  # (None under python -OO)

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
