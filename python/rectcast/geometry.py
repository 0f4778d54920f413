"""shapely and geopandas geometry in: polygons as the flat form the engine takes, line strings
as the segments they are made of. Vectorised through shapely 2's ``to_ragged_array``, with no
Python loop per geometry; every refusal names its row.

Coordinates are rounded to the nearest float32, as the CLI reads WKT and GeoJSON (shapely holds
float64, and most decimal coordinates have no float32 twin); ``rounding="exact"`` refuses a
value that would change instead. An ``origin`` (x, y) is subtracted first, in float64: geometry
far from (0, 0) (web mercator's x near -8.24e6, where float32's spacing is 0.5) keeps its
precision in a frame near the data (``auto_origin``). Then a vertex equal to the one before it
in its ring or line is dropped, as GEOS ignores it, so edge and segment numbers count the
vertices left.
"""

from __future__ import annotations

import gzip
import os
import warnings

import numpy as np

from . import _rectcast

#: shapely's geometry type ids (``shapely.get_type_id``) and their names.
_TYPE_NAMES = {
    -1: "missing (None)",
    0: "Point",
    1: "LineString",
    2: "LinearRing",
    3: "Polygon",
    4: "MultiPoint",
    5: "MultiLineString",
    6: "MultiPolygon",
    7: "GeometryCollection",
}
_POLYGONAL = (3, 6)
_LINEAL = (1, 2, 5)


class Polylines:
    """Line strings (roads, trajectories) as the segments they are made of, for any query's
    ``segments``: ``segments`` float32 (S, 4), x0, y0, x1, y1, in line order; ``line``, the
    row each segment comes from (int64); ``line_segment``, its place in that row's line (int64,
    counting on through a MultiLineString's parts). ``labels``: the rows' labels (a GeoSeries'
    or GeoDataFrame's index), or ``None`` for row numbers.

    A line of one distinct vertex is one segment of zero length there (a point).
    """

    __slots__ = ("segments", "line", "line_segment", "labels", "rows")

    def __init__(self, segments, line, line_segment, rows, labels=None):
        self.segments = segments
        self.line = line
        self.line_segment = line_segment
        self.rows = rows
        self.labels = labels

    def __len__(self) -> int:
        return len(self.segments)

    def __repr__(self) -> str:
        return f"rectcast.Polylines({self.rows} lines, {len(self)} segments)"

    def line_ids(self):
        """Each segment's line: its label where the lines came with an index, else its row."""
        if self.labels is None:
            return self.line
        return np.asarray(self.labels)[self.line]


def is_geometry(data) -> bool:
    """Whether ``data`` is shapely or geopandas geometry: a geometry, a GeoSeries or
    GeoDataFrame, or a sequence or object array of geometries."""
    if isinstance(data, Polylines):
        return True
    module = type(data).__module__
    if module.startswith(("shapely", "geopandas")):
        return True
    if module.startswith("pandas") and not hasattr(data, "columns") and getattr(data, "dtype", None) == object:
        # A pandas Series of shapely geometries.
        return len(data) > 0 and _is_shapely(data.iloc[0])
    if isinstance(data, np.ndarray):
        return data.dtype == object and data.size > 0 and _is_shapely(data.flat[0])
    if isinstance(data, (list, tuple)) and data:
        return _is_shapely(data[0])
    return False


def _is_shapely(value) -> bool:
    return type(value).__module__.startswith("shapely")


def _shapely():
    try:
        import shapely
    except ImportError as e:  # pragma: no cover - shapely is what made the geometry
        raise ImportError("geometry input needs shapely 2 (pip install shapely)") from e
    return shapely


def geometries(data, name):
    """The geometries of ``data`` (a GeoSeries, a GeoDataFrame's active geometry, a sequence):
    a 1-d object array."""
    return _geometries(data, name)[0]


def _geometries(data, name):
    """The geometries of ``data`` as a 1-d object array, and the rows' labels (a GeoSeries'
    or GeoDataFrame's index; ``None`` otherwise)."""
    labels = None
    if hasattr(data, "geometry") and hasattr(data, "columns"):  # a GeoDataFrame
        data = data.geometry
    if type(data).__module__.startswith(("geopandas", "pandas")) and hasattr(data, "index"):
        # A GeoSeries, or a pandas Series of geometries.
        labels = data.index
        data = data.array
    if _is_shapely(data):
        data = [data]
    geoms = np.asarray(data, dtype=object)
    if geoms.ndim != 1:
        raise ValueError(f"{name}: expected a sequence of geometries, found shape {geoms.shape}")
    return geoms, labels


def _refuse(name, geoms, bad, why):
    """Raises ``ValueError`` naming the first row in ``bad`` (a boolean mask), ``why`` it."""
    row = int(np.flatnonzero(bad)[0])
    count = int(bad.sum())
    raise ValueError(f"{name}: row {row}: {why(row)} ({count} such row{'s' if count > 1 else ''})")


def _checked(geoms, name, accepted, wanted):
    """Type ids checked: every row present, non-empty, of an ``accepted`` type."""
    shapely = _shapely()
    types = shapely.get_type_id(geoms)
    missing = types < 0
    if missing.any():
        _refuse(name, geoms, missing, lambda row: "a missing geometry (None)")
    wrong = ~np.isin(types, accepted)
    if wrong.any():
        _refuse(name, geoms, wrong, lambda row: f"a {_TYPE_NAMES[int(types[row])]}, not {wanted}")
    empty = shapely.is_empty(geoms)
    if empty.any():
        _refuse(name, geoms, empty, lambda row: f"an empty {_TYPE_NAMES[int(types[row])]}")
    with_z = shapely.has_z(geoms)
    if with_z.any():
        _refuse(
            name,
            geoms,
            with_z,
            lambda row: "has z coordinates; rectcast is 2-d: drop them with shapely.force_2d",
        )
    return types


def auto_origin(bounds):
    """The origin ``origin="auto"`` takes for geometry within ``bounds`` (min_x, min_y, max_x,
    max_y, float64): on each axis, the bounds' centre rounded to a whole number (half away
    from 0) where the bounds lie farther from 0 than their width (so that the shift makes
    float32's spacing there at least twice finer), else 0. Whole numbers keep whole
    coordinates whole, and the shift of a coordinate within the bounds is exact in float64.
    The CLI's ``--origin auto`` rule, from the same code."""
    return _rectcast.auto_origin(tuple(float(b) for b in bounds))


def bounds(data, name):
    """The bounds (min_x, min_y, max_x, max_y) of shapely or geopandas geometry; NaN where
    there is none."""
    geoms, _ = _geometries(data, name)
    if len(geoms) == 0:
        return np.full(4, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all missing: NaN, refused later
        return np.asarray(_shapely().total_bounds(geoms), dtype=np.float64)


def displacement(coords, rounded, origin):
    """How far rounding moved a coordinate (the largest |rounded + origin - coords|, float64,
    0 for none), and the coordinates' bounds (min_x, min_y, max_x, max_y; NaN for none)."""
    if len(coords) == 0:
        return (0.0, *[np.nan] * 4)
    moved = np.abs(rounded.astype(np.float64) + np.asarray(origin, dtype=np.float64) - coords)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # every value NaN: refused later
        low, high = np.nanmin(coords, axis=0), np.nanmax(coords, axis=0)
    return (float(np.nanmax(moved, initial=0.0)), *map(float, low), *map(float, high))


def _float32(coords, name, rounding, starts, origin=(0.0, 0.0), moved=None):
    """Coordinates (float64) less ``origin``, as float32: nearest, or refused where that
    changes one, naming its row and vertex (``starts``: each row's first vertex, and the end).
    ``moved``: a list the largest displacement (``displacement``) is appended to."""
    if rounding not in ("exact", "nearest"):
        raise ValueError(f'rounding: expected "exact" or "nearest", found {rounding!r}')
    original = coords
    if origin != (0.0, 0.0):
        coords = coords - np.asarray(origin, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        out = coords.astype(np.float32)
    if moved is not None:
        moved.append(displacement(original, out, origin))
    if rounding == "exact":
        changed = (out.astype(np.float64) != coords) & ~np.isnan(coords)
        if changed.any():
            vertex, axis = (int(i) for i in np.argwhere(changed)[0])
            row = int(np.searchsorted(starts, vertex, side="right")) - 1
            raise ValueError(
                f"{name}: row {row}: vertex {vertex - int(starts[row])}: {'xy'[axis]} is "
                f"{float(original[vertex, axis])!r}{' less the origin' if origin != (0.0, 0.0) else ''}, which float32 cannot hold exactly; pass "
                f'rounding="nearest" to round it'
            )
    return np.ascontiguousarray(out)


def _dedup(coords, offsets):
    """Drops each vertex equal to the one before it in its run (``offsets``: the runs' starts
    and end); returns the vertices kept and the runs' new offsets."""
    keep = np.ones(len(coords), dtype=bool)
    # Both coordinates at once, as one 64-bit word (-0 made +0 first: they are equal); numpy
    # indexes 1-d words much faster than rows.
    words = _words(coords + np.float32(0))
    if len(coords) > 1:
        np.not_equal(words[1:], words[:-1], out=keep[1:])
    keep[offsets[:-1][offsets[:-1] < len(coords)]] = True
    if keep.all():
        return coords, offsets
    kept_before = np.concatenate([[0], np.cumsum(keep)])
    return _points(_words(coords)[keep]), kept_before[offsets].astype(np.int64)


def _words(points):
    """float32 (N, 2) points as N 64-bit words (a view where they are C-ordered)."""
    return np.ascontiguousarray(points, dtype=np.float32).view(np.uint64).ravel()


def _points(words):
    """The inverse of ``_words``."""
    return words.view(np.float32).reshape(-1, 2)


def polygons(data, name="polygons", rounding="nearest", origin=(0.0, 0.0), moved=None):
    """shapely polygons and multipolygons as ``(vertices, ring_offsets, polygon_offsets)``,
    GeoArrow's flat form: vertices float32 (V, 2); ring r is
    ``vertices[ring_offsets[r]:ring_offsets[r + 1]]`` (its closing vertex kept, which the engine
    drops); polygon i is rings ``polygon_offsets[i]:polygon_offsets[i + 1]``: its shell and
    holes, or every ring of a multipolygon's parts (docs/semantics.md: the region is the same).
    Refused, naming the row: a missing or empty geometry, anything not polygonal, z
    coordinates. ``origin``: subtracted before rounding (the module's docstring)."""
    shapely = _shapely()
    geoms, _ = _geometries(data, name)
    if len(geoms) == 0:
        return np.zeros((0, 2), np.float32), np.zeros(1, np.int64), np.zeros(1, np.int64)
    _checked(geoms, name, _POLYGONAL, "a Polygon or MultiPolygon")
    kind, coords, offsets = shapely.to_ragged_array(geoms, include_z=False)
    ring_offsets = np.asarray(offsets[0], dtype=np.int64)
    if kind == shapely.GeometryType.POLYGON:
        polygon_offsets = np.asarray(offsets[1], dtype=np.int64)
    else:
        # A multipolygon's rings are its parts' rings, one after the other.
        part_offsets, geom_offsets = (np.asarray(o, dtype=np.int64) for o in offsets[1:])
        polygon_offsets = part_offsets[geom_offsets]
    vertices = _float32(coords, name, rounding, ring_offsets[polygon_offsets], origin, moved)
    vertices, ring_offsets = _dedup(vertices, ring_offsets)
    return vertices, ring_offsets, polygon_offsets


def polylines(data, name="segments", rounding="nearest", origin=(0.0, 0.0), moved=None) -> Polylines:
    """shapely line strings (LineString, LinearRing, MultiLineString) as :class:`Polylines`.
    Refused, naming the row: a missing or empty geometry, anything not lineal, z coordinates.
    ``origin``: subtracted before rounding (the module's docstring); a :class:`Polylines` is
    taken as it is."""
    if isinstance(data, Polylines):
        return data
    shapely = _shapely()
    geoms, labels = _geometries(data, name)
    if len(geoms) == 0:
        none = np.zeros(0, np.int64)
        return Polylines(np.zeros((0, 4), np.float32), none, none, 0, labels)
    types = _checked(geoms, name, _LINEAL, "a LineString or MultiLineString")
    # to_ragged_array takes one family at a time: rings as the lines they are.
    rings = types == 2
    if rings.any():
        geoms = geoms.copy()
        counts = shapely.get_num_coordinates(geoms[rings])
        geoms[rings] = shapely.linestrings(
            shapely.get_coordinates(geoms[rings]), indices=np.repeat(np.arange(rings.sum()), counts)
        )
    kind, coords, offsets = shapely.to_ragged_array(geoms, include_z=False)
    # A LineString row is one part; a MultiLineString's offsets also give each row's parts.
    part_offsets = np.asarray(offsets[0], dtype=np.int64)
    if kind == shapely.GeometryType.LINESTRING:
        row_parts = np.arange(len(geoms) + 1, dtype=np.int64)
    else:
        row_parts = np.asarray(offsets[1], dtype=np.int64)
    row_starts = part_offsets[row_parts]
    vertices, part_offsets = _dedup(_float32(coords, name, rounding, row_starts, origin, moved), part_offsets)
    # A segment from each vertex that has a next one in its part; a part of one vertex, a
    # segment from it to itself. In vertex order, so in line order.
    sizes = np.diff(part_offsets)
    # Each vertex's row: a part's vertices are its row's.
    row_of_part = np.repeat(np.arange(len(geoms), dtype=np.int64), np.diff(row_parts))
    row_of_vertex = np.repeat(row_of_part, sizes)
    last = np.zeros(len(vertices), dtype=bool)
    last[part_offsets[1:][sizes > 0] - 1] = True
    single = np.zeros(len(vertices), dtype=bool)
    single[part_offsets[:-1][sizes == 1]] = True
    starts = np.flatnonzero(~last | single)
    ends = starts + ~single[starts]
    words = _words(vertices)
    ends_of = np.empty((len(starts), 2), dtype=np.uint64)
    ends_of[:, 0] = words[starts]
    ends_of[:, 1] = words[ends]
    segments = ends_of.view(np.float32).reshape(-1, 4)
    line = row_of_vertex[starts]
    first_of_row = np.searchsorted(line, np.arange(len(geoms)))
    line_segment = np.arange(len(line), dtype=np.int64) - first_of_row[line]
    return Polylines(segments, line, line_segment, len(geoms), labels)


def from_shapely(geoms, rounding="nearest", origin=(0.0, 0.0)):
    """shapely or geopandas geometry as rectcast's inputs: polygons and multipolygons as
    ``(vertices, ring_offsets, polygon_offsets)`` (what ``polygons=`` takes), line strings as
    :class:`Polylines` (what ``segments`` takes).
    A GeoSeries or GeoDataFrame (its active geometry) works too; the kind comes from row 0.
    ``origin`` (x, y) is subtracted, in float64, before rounding to float32: pass a query the
    same ``origin`` for its other inputs (its geometry output comes back shifted by it)."""
    shapely = _shapely()
    rows, _ = _geometries(geoms, "geometry")
    origin = tuple(float(v) for v in origin)
    if len(rows) and int(shapely.get_type_id(rows[0])) in (3, 6):
        return polygons(geoms, "geometry", rounding, origin)
    return polylines(geoms, "geometry", rounding, origin)


class SridWarning(UserWarning):
    """An EWKT file's SRID (``SRID=4326;POLYGON …``), read and ignored: coordinates are used as
    given."""


def read_polygons(path, origin=(0.0, 0.0)):
    """A WKT or GeoJSON file's polygons and multipolygons (``.wkt``, ``.geojson``, ``.json``,
    gzipped or not), read by the parser the CLI reads ``--polygons`` with: GeoArrow's
    ``(vertices, ring_offsets, polygon_offsets)``, what ``polygons=`` takes, polygon i the file's
    geometry i (WKT: one geometry a line, blank lines skipped). WKT numbers are read straight
    to float32 and GeoJSON's through float64, as the CLI reads them (``from_shapely`` rounds
    shapely's float64: the two can differ in the last bit of a rare decimal); a vertex equal to
    the one before it is dropped, as GEOS ignores it; an EWKT SRID is said once
    (:class:`SridWarning`) and ignored. The first geometry, in the file's order, that is not a
    valid polygon raises ``ValueError`` worded as the CLI words it, naming its place:
    ``parcels.wkt:3:1: polygon 2: …`` or ``parcels.geojson: feature 2: polygon 2: …``.

    ``origin`` (x, y) is subtracted, in float64, before rounding (the module's docstring):
    the arrays are then in that frame, for queries given ``origin=None``. Where rounding moves
    a vertex by more than ``DISPLACEMENT_BOUND`` of the geometry's extent, it warns
    (``RoundingWarning``).
    """
    name, text = _read_text(path)
    origin = tuple(float(v) for v in origin)
    vertices, ring_offsets, polygon_offsets, srid, moved = _rectcast.read_polygons(name, text, origin)
    _say_srid(name, srid)
    _say_moved(name, origin, moved)
    return vertices, ring_offsets, polygon_offsets


def read_polylines(path, origin=(0.0, 0.0)) -> Polylines:
    """A WKT or GeoJSON file's line strings (LINESTRING, MULTILINESTRING), read by the parser
    the CLI reads them with as ``--segments``: :class:`Polylines`, line i the file's geometry i,
    its segments numbered as the CLI's ``line_segment``. Rounding, repeated vertices, SRIDs and
    errors and ``origin`` as :func:`read_polygons`."""
    name, text = _read_text(path)
    origin = tuple(float(v) for v in origin)
    segments, line, line_segment, lines, srid, moved = _rectcast.read_polylines(name, text, origin)
    _say_srid(name, srid)
    _say_moved(name, origin, moved)
    return Polylines(segments, line, line_segment, lines)


def _read_text(path):
    """``path`` as a string, and its text (gzip decompressed for ``.gz``)."""
    name = os.fspath(path)
    opener = gzip.open if name.lower().endswith(".gz") else open
    # newline="": lines end as the CLI ends them (a lone \r is not a line's end there).
    with opener(name, "rt", encoding="utf-8", newline="") as f:
        return name, f.read()


#: Rounding that moves a vertex by more than this share of the inputs' extent (their bounds'
#: larger side) warns (``RoundingWarning``): the CLI's bound, from the same code.
DISPLACEMENT_BOUND = _rectcast.DISPLACEMENT_BOUND


def _say_moved(name, origin, moved):
    distance, extent = moved
    if distance > DISPLACEMENT_BOUND * extent:
        from . import RoundingWarning

        warnings.warn(
            f"{name}: rounding to float32 at origin {origin} moved a vertex by {distance:.3g}, "
            f"more than 2^-20 of the geometry's extent {extent:.3g}: pass origin=(x, y) near "
            "the data, and the queries origin=None",
            RoundingWarning,
            stacklevel=3,
        )


def _say_srid(name, srid):
    if srid is not None:
        message = f"{name}: EWKT SRID={srid}, ignored: coordinates are used as given"
        warnings.warn(message, SridWarning, stacklevel=3)
