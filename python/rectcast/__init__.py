"""Segment-vs-rectangle collision for huge batches, exact, on the GPU or the CPU.

A thin layer over the Rust library ``rectcast``: the engine runs with the GIL released, inputs
are read in place when they are float32 arrays of shape (N, 4) in C order, and results come
back as a numpy structured array with the fields of the CLI's ``.npy`` output, or as a
``pyarrow.RecordBatch`` with ``to="arrow"``.

Inputs (``segments``: x0, y0, x1, y1; ``rects``: min_x, min_y, max_x, max_y) may be:

- a numpy float32 array of shape (N, 4), C order: read in place, no copy (unless its buffer is
  not aligned to 4 bytes, as a deserialized one may be: then it is copied to one that is);
- any other numeric array of that shape (float64, Fortran order…) with ``copy=True``: converted
  to float32 in C order first, a documented copy (values that float32 cannot hold exactly are
  rounded, which changes the question asked);
- Arrow data (a ``pyarrow.Table`` or ``RecordBatch``, a polars DataFrame, anything with the
  Arrow PyCapsule interface) with float32 columns named as above, in any order, other columns
  ignored: the four columns are copied side by side.

Invalid values (NaN, infinities, beyond ±2^62, min > max) raise ``ValueError`` naming the row
and the field; GPU failures raise ``RuntimeError``.
"""

from __future__ import annotations

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
    "CIRCLE_COLUMNS",
    "polygon_pairs",
    "overlaps",
    "CIRCLE_KIND_NAMES",
    "hits",
    "counts",
    "clip",
    "default_engine",
]

SEGMENT_COLUMNS = ("x0", "y0", "x1", "y1")
RECT_COLUMNS = ("min_x", "min_y", "max_x", "max_y")
CIRCLE_COLUMNS = ("cx", "cy", "r")
#: The name of each ``kind`` code: 0 miss, 1 inside, 2 enter, 3 exit, 4 cross.
KIND_NAMES = tuple(_rectcast.kind_names())
#: The name of each segment x segment ``contact`` code: 0 miss, 1 cross, 2 touch, 3 overlap.
CONTACT_NAMES = tuple(_rectcast.contact_names())
#: The name of each segment x circle ``kind`` code: 0 miss, 1 inside, 2 enter, 3 exit, 4 cross,
#: 5 tangent.
CIRCLE_KIND_NAMES = tuple(_rectcast.circle_kind_names())
#: The name of each ``entry``/``exit`` value (side bits 1 min_x, 2 max_x, 4 min_y, 8 max_y).
SIDE_NAMES = tuple(_rectcast.side_names())


def _records(data, columns, name, copy):
    """``data`` as a float32 (N, len(columns)) C-order array, in place when it already is one."""
    if hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__"):
        return _from_arrow(data, columns, name)
    if not isinstance(data, np.ndarray):
        raise TypeError(
            f"{name}: expected a numpy array of shape (N, {len(columns)}) or Arrow data, "
            f"found {type(data).__name__}"
        )
    if data.ndim != 2 or data.shape[1] != len(columns):
        raise ValueError(f"{name}: expected shape (N, {len(columns)}), found {data.shape}")
    if data.dtype == np.float32 and data.flags.c_contiguous:
        # Read in place; only an unaligned buffer (as a deserialized one may be) is copied,
        # since Rust reads f32 values at aligned addresses.
        return data if data.flags.aligned else np.require(data, requirements=["C", "A"])
    if not copy:
        raise TypeError(
            f"{name}: expected float32 in C order, found {data.dtype}"
            f"{'' if data.flags.c_contiguous else ', not C-contiguous'}; "
            "pass copy=True to convert (a copy, and float32 rounding)"
        )
    if not np.issubdtype(data.dtype, np.number):
        raise TypeError(f"{name}: expected numbers, found {data.dtype}")
    return np.ascontiguousarray(data, dtype=np.float32)


def _from_arrow(data, columns, name):
    import pyarrow as pa

    table = pa.table(data)
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise ValueError(
            f"{name}: no column {missing[0]}: expected float32 columns {','.join(columns)} "
            f"(in any order; others are ignored), found {','.join(table.column_names)}"
        )
    out = np.empty((table.num_rows, 4), dtype=np.float32)
    for i, column in enumerate(columns):
        values = table.column(column)
        if values.type != pa.float32():
            raise TypeError(f"{name}: column {column} is {values.type}, expected float")
        if values.null_count:
            row = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
            raise ValueError(f"{name} {row}: {column} is null")
        out[:, i] = values.to_numpy()
    return out


def _polygons(polygons, name):
    """Polygons as the flat form the Rust module takes: vertices float32 (V, 2), offsets
    int64 (P + 1). From ``(vertices, offsets)``, or from a sequence of rings."""
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
    return vertices, offsets


def _table(packed, to: str, kinds=None):
    """The packed rows from the Rust module as a numpy structured array (a view of its bytes,
    no copy), or an Arrow batch (``kinds``: the names of the ``kind`` codes)."""
    data, descr = packed
    rows = data.view(np.dtype(list(descr)))
    if to == "numpy":
        return rows
    if to == "arrow":
        return _arrow(rows, KIND_NAMES if kinds is None else kinds)
    raise ValueError(f'to: expected "numpy" or "arrow", found {to!r}')


def _arrow(rows: np.ndarray, kind_names):
    """The CLI's Parquet columns: indices uint64, t and coordinates float32, kind and sides as
    names; null where the CSV output is empty (a miss)."""
    import pyarrow as pa

    kinds = pa.array(kind_names, type=pa.string())
    contacts = pa.array(CONTACT_NAMES, type=pa.string())
    sides = pa.array([s or None for s in SIDE_NAMES], type=pa.string())
    arrays = []
    for field in rows.dtype.names:
        values = np.ascontiguousarray(rows[field])
        if field == "kind":
            array = kinds.take(pa.array(values))
        elif field == "contact":
            array = contacts.take(pa.array(values))
        elif field in ("entry", "exit"):
            array = sides.take(pa.array(values))
        elif values.dtype == np.float32:
            array = pa.array(values, mask=np.isnan(values))
        elif field in ("rect", "polygon", "entry_edge", "exit_edge") and values.dtype == np.int64:
            array = pa.array(values.astype(np.uint64), mask=values < 0)
        else:
            array = pa.array(values)
        arrays.append(array)
    return pa.RecordBatch.from_arrays(arrays, names=list(rows.dtype.names))


class Engine:
    """One backend, kept across calls: buffers are reused, so keep the engine.

    ``backend``: ``"auto"`` (a hardware GPU when one opens, else the CPU; ``chosen`` says
    which and why), ``"gpu"`` (fail without one) or ``"cpu"``. ``threads``: the CPU backend's
    worker threads, 0 for one per core.
    """

    def __init__(self, backend: str = "auto", threads: int = 0):
        self._engine = _rectcast.Engine(backend, threads)

    @property
    def chosen(self) -> str:
        """What the engine runs on, and why."""
        return self._engine.chosen

    def __repr__(self) -> str:
        return f"rectcast.Engine({self.chosen!r})"

    def _inputs(self, segments, rects, copy):
        return (
            _records(segments, SEGMENT_COLUMNS, "segments", copy),
            _records(rects, RECT_COLUMNS, "rects", copy),
        )

    def _shapes(self, query, segments, rects, walls, circles, to, copy, polygons=None):
        """A query against walls, circles or polygons, when one was given (else None)."""
        given = [
            name
            for name, v in (("rects", rects), ("walls", walls), ("circles", circles), ("polygons", polygons))
            if v is not None
        ]
        if len(given) != 1:
            raise TypeError(f"{query}: give one of rects, walls, circles, polygons; found {given or 'none'}")
        if rects is not None:
            return None
        s = _records(segments, SEGMENT_COLUMNS, "segments", copy)
        if walls is not None:
            w = _records(walls, SEGMENT_COLUMNS, "walls", copy)
            return _table(self._engine.shape_query(query, "walls", s, w), to)
        if polygons is not None:
            vertices, offsets = _polygons(polygons, "polygons")
            return _table(self._engine.polygon_query(query, s, vertices, offsets), to)
        c = _records(circles, CIRCLE_COLUMNS, "circles", copy)
        return _table(self._engine.shape_query(query, "circles", s, c), to, CIRCLE_KIND_NAMES)

    def pairs(
        self, segments, rects=None, *, walls=None, circles=None, polygons=None, to: str = "numpy", copy: bool = False
    ):
        """Every segment against every rect, one row per pair, segment-major.

        Fields: segment, rect (uint64), hit (bool), kind (uint8), t_enter, t_exit (float32, NaN
        on a miss), entry, exit (uint8 side bits). With ``walls=`` or ``circles=`` instead of
        rects: ``wall_pairs`` and ``circle_pairs``."""
        shapes = self._shapes("pairs", segments, rects, walls, circles, to, copy, polygons)
        if shapes is not None:
            return shapes
        s, r = self._inputs(segments, rects, copy)
        return _table(self._engine.pairs(s, r), to)

    def first_hit(
        self, segments, rects=None, *, walls=None, circles=None, polygons=None, to: str = "numpy", copy: bool = False
    ):
        """The closest hit of each segment: the smallest t_enter, ties to the lowest rect.

        One row per segment; ``rect`` is -1 (null in Arrow) and ``kind`` 0 on a miss. With
        ``walls=`` or ``circles=``: fields segment, wall or circle (int64, -1 on a miss),
        contact or kind, t_enter, t_exit."""
        shapes = self._shapes("first_hit", segments, rects, walls, circles, to, copy, polygons)
        if shapes is not None:
            return shapes
        s, r = self._inputs(segments, rects, copy)
        return _table(self._engine.first_hit(s, r), to)

    def wall_pairs(self, segments, walls, *, to: str = "numpy", copy: bool = False):
        """Segment x segment: every segment against every wall (both x0, y0, x1, y1), one row
        per pair, segment-major. Fields: segment, wall (uint64), hit (bool), contact (uint8, a
        ``CONTACT_NAMES`` code), t_enter, t_exit (float32 along the segment, NaN on a miss)."""
        return self.pairs(segments, walls=walls, to=to, copy=copy)

    def circle_pairs(self, segments, circles, *, to: str = "numpy", copy: bool = False):
        """Segment x circle: every segment against every closed disk (cx, cy, r, r >= 0), one
        row per pair, segment-major. Fields: segment, circle (uint64), hit (bool), kind (uint8,
        a ``CIRCLE_KIND_NAMES`` code), t_enter, t_exit (float32 along the segment, NaN on a
        miss)."""
        return self.pairs(segments, circles=circles, to=to, copy=copy)

    def polygon_pairs(self, segments, polygons, *, to: str = "numpy", copy: bool = False):
        """Every segment against every polygon (simple, closed: boundary and interior),
        segment-major. ``polygons``: a sequence of rings (each (n, 2), a closing repeat of the
        first vertex allowed), or the flat form ``(vertices, offsets)``: float32 (V, 2) and
        P + 1 integers from 0 to V. Fields: segment, polygon (uint64), hit (bool), kind (uint8,
        a ``KIND_NAMES`` code), t_enter, t_exit (float32, NaN on a miss), entry_edge, exit_edge
        (int64, edge k runs from vertex k to k + 1; -1 where there is none). A polygon that is
        not simple raises ``ValueError`` naming it."""
        return self.pairs(segments, polygons=polygons, to=to, copy=copy)

    def overlaps(self, polygons, other, *, to: str = "numpy"):
        """Polygon × polygon: the overlapping pairs (closed: touching and containment count),
        fields polygon and other (uint64), in order. Both in ``polygon_pairs``' forms."""
        a = _polygons(polygons, "polygons")
        b = _polygons(other, "other")
        return _table(self._engine.overlaps(*a, *b), to)

    def first_hit_rects(self, segments, rects, *, copy: bool = False) -> np.ndarray:
        """Each segment's first-hit rect alone, ``first_hit``'s ``rect`` column: an int64 array,
        -1 on a miss. On a GPU only 4 bytes a segment come back."""
        s, r = self._inputs(segments, rects, copy)
        return self._engine.first_hit_rects(s, r)

    def hits(
        self, segments, rects=None, *, walls=None, circles=None, polygons=None, to: str = "numpy", copy: bool = False
    ):
        """Only the hitting pairs, in (segment, rect) order, with the fields of ``pairs``."""
        shapes = self._shapes("hits", segments, rects, walls, circles, to, copy, polygons)
        if shapes is not None:
            return shapes
        s, r = self._inputs(segments, rects, copy)
        return _table(self._engine.hits(s, r), to)

    def counts(
        self, segments, rects=None, *, walls=None, circles=None, polygons=None, to: str = "numpy", copy: bool = False
    ):
        """Hits per rect: one row (rect, hits) per rect; (wall, hits) or (circle, hits) with
        ``walls=`` or ``circles=``."""
        shapes = self._shapes("counts", segments, rects, walls, circles, to, copy, polygons)
        if shapes is not None:
            return shapes
        s, r = self._inputs(segments, rects, copy)
        return _table(self._engine.counts(s, r), to)

    def clip(self, segments, rect=None, *, rects=None, to: str = "numpy", copy: bool = False):
        """Each segment clipped to ``rect`` (min_x, min_y, max_x, max_y), or to its own row of
        ``rects``. Fields: segment, kind, x0, y0, x1, y1 (NaN on a miss)."""
        if (rect is None) == (rects is None):
            raise TypeError("clip: give rect or rects")
        s = _records(segments, SEGMENT_COLUMNS, "segments", copy)
        if rect is not None:
            one = np.asarray(rect, dtype=np.float32).reshape(1, 4)
            return _table(self._engine.clip(s, np.ascontiguousarray(one), False), to)
        r = _records(rects, RECT_COLUMNS, "rects", copy)
        if len(r) != len(s):
            raise ValueError(
                f"rects: clipping to one rect per segment needs as many rects as segments: "
                f"{len(s)} segments, {len(r)} rects"
            )
        return _table(self._engine.clip(s, r, True), to)


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


def pairs(segments, rects=None, **options):
    """``default_engine().pairs(...)``."""
    return default_engine().pairs(segments, rects, **options)


def first_hit(segments, rects=None, **options):
    """``default_engine().first_hit(...)``."""
    return default_engine().first_hit(segments, rects, **options)


def wall_pairs(segments, walls, **options):
    """``default_engine().wall_pairs(...)``."""
    return default_engine().wall_pairs(segments, walls, **options)


def circle_pairs(segments, circles, **options):
    """``default_engine().circle_pairs(...)``."""
    return default_engine().circle_pairs(segments, circles, **options)


def polygon_pairs(segments, polygons, **options):
    """``Engine.polygon_pairs`` on the default engine."""
    return default_engine().polygon_pairs(segments, polygons, **options)


def overlaps(polygons, other, **options):
    """``Engine.overlaps`` on the default engine."""
    return default_engine().overlaps(polygons, other, **options)


def first_hit_rects(segments, rects, **options):
    """``default_engine().first_hit_rects(...)``."""
    return default_engine().first_hit_rects(segments, rects, **options)


def hits(segments, rects=None, **options):
    """``default_engine().hits(...)``."""
    return default_engine().hits(segments, rects, **options)


def counts(segments, rects=None, **options):
    """``default_engine().counts(...)``."""
    return default_engine().counts(segments, rects, **options)


def clip(segments, rect=None, **options):
    """``default_engine().clip(...)``."""
    return default_engine().clip(segments, rect, **options)
