"""shapely and geopandas geometry in (rectcast/geometry.py): polygons and line strings answer as
the arrays they stand for, every refusal names its row, repeated vertices are dropped, and
the decisions agree with shapely's ``intersects`` on scenes full of touching cases."""

import re

import numpy as np
import pytest

import rectcast

shapely = pytest.importorskip("shapely")
gpd = pytest.importorskip("geopandas")


@pytest.fixture(scope="module")
def engine():
    return rectcast.Engine("cpu")


def first_difference(got, want):
    """The first row where two structured arrays differ, for the failure message."""
    for i, (a, b) in enumerate(zip(got, want)):
        if a.tobytes() != b.tobytes():
            return f"row {i}: {a} against {b}"
    return f"lengths {len(got)} and {len(want)}"


def assert_same_rows(got, want):
    assert got.dtype == want.dtype
    assert len(got) == len(want) and got.tobytes() == want.tobytes(), first_difference(got, want)


def hulls(seed, count, span=20):
    """Convex polygons over integer points (GEOS's hull drops collinear vertices): scenes
    where segments touch vertices and run along edges."""
    rng = np.random.default_rng(seed)
    polygons = []
    while len(polygons) < count:
        points = rng.integers(0, span, (6, 2))
        hull = shapely.convex_hull(shapely.multipoints(points))
        if hull.geom_type == "Polygon":
            polygons.append(hull)
    return polygons


def integer_lines(seed, count, span=20):
    """Line strings of 1–4 short segments between integer points (a walk of steps up to 3)."""
    rng = np.random.default_rng(seed)
    walks = []
    for _ in range(count):
        steps = rng.integers(-3, 4, (rng.integers(1, 5), 2))
        walks.append(shapely.LineString(np.cumsum(np.vstack([rng.integers(0, span, (1, 2)), steps]), axis=0)))
    return walks


def test_shapely_polygons_answer_as_their_rings_given_as_arrays(engine):
    polygons = hulls(1, 40)
    rings = [np.asarray(p.exterior.coords, np.float32) for p in polygons]
    segments = np.random.default_rng(2).uniform(-2, 22, (300, 4)).astype(np.float32)
    for query in ("pairs", "first_hit", "hits", "counts"):
        want = getattr(engine, query)(segments, polygons=rings)
        assert_same_rows(getattr(engine, query)(segments, polygons=polygons), want)
        assert_same_rows(getattr(engine, query)(segments, polygons=gpd.GeoSeries(polygons)), want)
        frame = gpd.GeoDataFrame({"name": range(len(polygons))}, geometry=polygons)
        assert_same_rows(getattr(engine, query)(segments, polygons=frame), want)
    vertices, ring_offsets, polygon_offsets = rectcast.from_shapely(polygons)
    np.testing.assert_array_equal(polygon_offsets, np.arange(len(polygons) + 1))
    flat = (vertices, ring_offsets, polygon_offsets)
    assert_same_rows(engine.pairs(segments, polygons=flat), engine.pairs(segments, polygons=rings))


def test_line_strings_are_their_segments_and_each_row_names_its_line_and_place(engine):
    lines = gpd.GeoDataFrame(
        {"road": ["a", "b", "c"]},
        geometry=[
            shapely.LineString([(0, 5), (20, 5), (20, 30)]),
            shapely.MultiLineString([[(1, 1), (2, 2)], [(3, 3), (4, 4), (9, 4)]]),
            shapely.LinearRing([(11, 0), (13, 0), (13, 9)]),
        ],
        index=[10, 20, 30],
    )
    segments = np.array(
        [
            [0, 5, 20, 5], [20, 5, 20, 30],
            [1, 1, 2, 2], [3, 3, 4, 4], [4, 4, 9, 4],
            [11, 0, 13, 0], [13, 0, 13, 9], [13, 9, 11, 0],
        ],
        np.float32,
    )
    polylines = rectcast.from_shapely(lines)
    assert isinstance(polylines, rectcast.Polylines)
    np.testing.assert_array_equal(polylines.segments, segments)
    np.testing.assert_array_equal(polylines.line, [0, 0, 1, 1, 1, 2, 2, 2])
    np.testing.assert_array_equal(polylines.line_segment, [0, 1, 0, 1, 2, 0, 1, 2])
    parcels = [shapely.box(10, 0, 12, 10), shapely.Polygon([(15, 20), (25, 20), (20, 28)])]
    want = engine.hits(segments, polygons=parcels)
    assert_same_rows(engine.hits(lines, polygons=parcels), want)
    assert_same_rows(engine.hits(polylines, polygons=parcels), want)
    frame = engine.hits(lines, polygons=parcels, to="pandas", ids="road")
    assert list(frame.columns[:3]) == ["road", "line", "line_segment"]
    assert frame[["road", "line", "line_segment", "segment", "polygon"]].values.tolist() == [
        ["a", 10, 0, 0, 0],
        ["a", 10, 1, 1, 1],
        ["c", 30, 0, 5, 0],
        ["c", 30, 2, 7, 0],
    ]
    # Walls from line strings too: their segments.
    walls = engine.hits(np.array([[0, 0, 30, 30]], np.float32), walls=lines)
    assert_same_rows(walls, engine.hits(np.array([[0, 0, 30, 30]], np.float32), walls=segments))


BAD = [
    (shapely.Point(0, 0), "row 2: a Point, not a Polygon"),
    (None, "row 2: a missing geometry (None)"),
    (shapely.Polygon(), "row 2: an empty Polygon"),
    (shapely.Polygon([(0, 0, 1), (1, 0, 1), (1, 1, 1)]), "row 2: has z coordinates"),
    (shapely.LineString([(0, 0), (1, 1)]), "row 2: a LineString, not a Polygon or MultiPolygon"),
    (shapely.GeometryCollection([shapely.box(0, 0, 1, 1)]), "row 2: a GeometryCollection, not a Polygon"),
]


@pytest.mark.parametrize("bad, message", BAD, ids=[m for _, m in BAD])
def test_a_bad_polygon_row_is_refused_by_its_row_before_any_work(engine, bad, message):
    rows = [shapely.box(0, 0, 1, 1), shapely.box(2, 2, 3, 3), bad]
    with pytest.raises(ValueError, match="^polygons: " + message.replace("(", r"\(").replace(")", r"\)")):
        engine.first_hit(np.zeros((1, 4), np.float32), polygons=rows)


@pytest.mark.parametrize(
    "bad, message",
    [
        (shapely.Polygon([(0, 0), (1, 0), (1, 1)]), "row 1: a Polygon, not a LineString or MultiLineString"),
        (shapely.LineString(), "row 1: an empty LineString"),
        (None, "row 1: a missing geometry"),
    ],
)
def test_a_bad_line_row_is_refused_by_its_row(engine, bad, message):
    with pytest.raises(ValueError, match="^segments: " + message):
        engine.hits([shapely.LineString([(0, 0), (1, 1)]), bad], rects=np.zeros((0, 4), np.float32))


def test_repeated_vertices_are_dropped_as_geos_ignores_them(engine):
    """A vertex equal to the one before it, in shapely's float64 or once rounded to float32,
    is dropped: the polygon answers as the ring without it, edges numbered without it; a line
    string's segments skip it, and a line of one point is a point."""
    tiny = float(np.nextafter(np.float32(4), np.float32(5))) / 2 + 2  # rounds to 4 in float32
    repeated = shapely.Polygon([(0, 0), (4, 0), (4, 0), (tiny, 0), (4, 4), (0, 4), (0, 4)])
    plain = np.array([[0, 0], [4, 0], [4, 4], [0, 4]], np.float32)
    segments = np.array([[-1, 1, 5, 3], [2, -1, 2, 5], [5, 5, -1, -1]], np.float32)
    assert_same_rows(engine.pairs(segments, polygons=[repeated]), engine.pairs(segments, polygons=[plain]))
    lines = rectcast.from_shapely(
        [shapely.LineString([(0, 0), (0, 0), (3, 0), (3, 0)]), shapely.LineString([(7, 7), (7, 7)])]
    )
    np.testing.assert_array_equal(lines.segments, [[0, 0, 3, 0], [7, 7, 7, 7]])
    np.testing.assert_array_equal(lines.line, [0, 1])


def test_exact_rounding_refuses_a_coordinate_float32_cannot_hold():
    assert rectcast.from_shapely([shapely.box(0, 0, 1, 1)], rounding="exact")[0].dtype == np.float32
    lines = [shapely.LineString([(0, 0), (1, 0)]), shapely.MultiLineString([[(0, 0), (1, 0)], [(2, 2), (0.1, 3)]])]
    with pytest.raises(ValueError, match=r"^geometry: row 1: vertex 3: x is 0\.1, which float32 cannot hold exactly"):
        rectcast.from_shapely(lines, rounding="exact")
    # The default rounds to nearest, as the CLI reads WKT and GeoJSON.
    assert rectcast.from_shapely([shapely.LineString([(0.1, 0), (1, 0)])]).segments[0, 0] == np.float32(0.1)


def holed_and_multi(seed, count, span=20):
    """Valid polygons with holes and multipolygons on integer points: a hull with a smaller
    hull inside it as a hole (touching the shell now and then), or two hulls as parts."""
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < count:
        shell = shapely.convex_hull(shapely.multipoints(rng.integers(0, span, (8, 2))))
        other = shapely.convex_hull(shapely.multipoints(rng.integers(0, span, (5, 2))))
        if shell.geom_type != "Polygon" or other.geom_type != "Polygon":
            continue
        if rng.integers(2) == 0:
            candidate = shapely.Polygon(shell.exterior, [other.exterior])
        else:
            candidate = shapely.MultiPolygon([shell, other])
        if candidate.is_valid:
            found.append(candidate)
    return found


def test_holes_and_multipolygons_answer_as_their_rings(engine):
    """A polygon with holes is its shell and holes, a MultiPolygon its parts' rings: the rows
    equal those of the same rings given in the flat form, edges numbered ring after ring."""
    square_with_hole = shapely.Polygon([(0, 0), (4, 0), (4, 4), (0, 4)], [[(1, 1), (3, 1), (3, 3), (1, 3)]])
    two_squares = shapely.MultiPolygon([shapely.box(0, 0, 4, 4), shapely.box(6, 0, 8, 4)])
    segments = np.array([[1.5, 1.5, 2.5, 2.5], [-2, 2, 6, 2], [2, 2, 4, 2], [-2, 2, 14, 2]], np.float32)
    first = engine.pairs(segments, polygons=gpd.GeoSeries([square_with_hole, two_squares]))
    got = [(int(r["polygon"]), bool(r["hit"]), float(r["t_enter"]), float(r["t_exit"])) for r in first]
    assert [g[1] for g in got] == [False, True, True, True, True, True, True, True]
    assert got[2][2:] == (0.25, 0.75) and got[4][2:] == (0.5, 1.0) and got[7][2:] == (0.125, 0.625)
    # The rings of the entry and exit edges: across the shell; out of the hole (ring 1) to the
    # boundary; from the first part's shell (ring 0) to the second's (ring 1).
    rings = [(int(r["entry_ring"]), int(r["exit_ring"])) for r in first]
    assert (rings[2], rings[4], rings[7]) == ((0, 0), (1, -1), (0, 1))
    vertices, ring_offsets, polygon_offsets = rectcast.from_shapely([square_with_hole, two_squares])
    np.testing.assert_array_equal(polygon_offsets, [0, 2, 4])
    assert_same_rows(engine.pairs(segments, polygons=(vertices, ring_offsets, polygon_offsets)), first)


@pytest.mark.parametrize("seed", [3, 4])
def test_hits_agree_with_shapely_intersects_line_by_polygon(engine, seed):
    """The peer check: for every line string and polygon of integer scenes (segments through
    vertices, along edges, ending on the boundary; polygons with holes and multipolygons
    among them), rectcast hits exactly where shapely's ``intersects`` says they meet.
    Decisions only: shapely has no t."""
    polygons = gpd.GeoSeries(hulls(seed, 40) + holed_and_multi(seed, 40))
    lines = gpd.GeoSeries(integer_lines(seed + 100, 400))
    pairs = engine.pairs(lines, polygons=polygons)
    segment_line = rectcast.from_shapely(lines).line
    got = np.zeros((len(lines), len(polygons)), bool)
    np.logical_or.at(got, (segment_line[pairs["segment"]], pairs["polygon"]), pairs["hit"])
    want = shapely.intersects(np.asarray(lines)[:, None], np.asarray(polygons)[None, :])
    if (got != want).any():
        line, polygon = (int(i) for i in np.argwhere(got != want)[0])
        pytest.fail(
            f"{int((got != want).sum())} of {got.size} pairs differ; first: line {line} "
            f"{lines[line].wkt} × polygon {polygon} {polygons[polygon].wkt}: rectcast "
            f"{got[line, polygon]}, shapely {want[line, polygon]}"
        )
    # Scenes of the kind meant: a good share meet, some only on the boundary.
    assert 0.1 < want.mean() < 0.9
    touching = shapely.touches(np.asarray(lines)[:, None], np.asarray(polygons)[None, :])
    assert touching.sum() > 20
    # Lines that lie in a hole, or cross between parts, are among them.
    holed = np.asarray(shapely.get_num_interior_rings(np.asarray(polygons)) > 0)
    in_hole = shapely.within(np.asarray(lines)[:, None], shapely.polygons(shapely.get_interior_ring(np.asarray(polygons)[holed], 0))[None, :])
    assert in_hole.sum() > 5, in_hole.sum()


def test_a_geodataframe_back_holds_each_hits_part_of_its_segment_in_the_inputs_crs(engine):
    roads = gpd.GeoDataFrame(
        {"name": ["a", "b"]},
        geometry=[shapely.LineString([(0, 5), (20, 5), (20, 30)]), shapely.LineString([(100, 100), (101, 101)])],
        crs="EPSG:3857",
    )
    parcels = gpd.GeoSeries([shapely.box(10, 0, 12, 10), shapely.Polygon([(15, 20), (25, 20), (20, 28)])], crs="EPSG:3857")
    hits = engine.hits(roads, polygons=parcels, to="geopandas", ids="name")
    assert isinstance(hits, gpd.GeoDataFrame) and hits.crs == "EPSG:3857"
    want = gpd.GeoSeries.from_wkt(["LINESTRING (10 5, 12 5)", "LINESTRING (20 20, 20 28)"], crs="EPSG:3857")
    assert hits.geometry.geom_equals_exact(want, tolerance=1e-5).all(), hits.geometry.to_wkt().tolist()
    first = engine.first_hit(roads, polygons=parcels, to="geopandas")
    assert first.geometry[2] is None and first["polygon"].isna()[2]
    # A touch at one t is a point.
    touch = engine.first_hit([shapely.LineString([(12, 10), (14, 12)])], polygons=parcels, to="geopandas")
    assert touch.geometry[0].wkt == "POINT (12 10)"
    # A clip's rows are their own geometry.
    clipped = engine.clip(roads, [0, 0, 10, 10], to="geopandas")
    assert clipped.geometry[0].wkt == "LINESTRING (0 5, 10 5)" and clipped.geometry[1] is None
    # Hits per parcel, on the parcels.
    counts = engine.counts(roads, polygons=parcels, to="geopandas")
    assert counts["hits"].tolist() == [1, 1] and counts.geometry.equals(parcels.reset_index(drop=True))
    with pytest.raises(TypeError, match='to="geopandas": these rows \\(wall, hits\\) have no geometry'):
        engine.counts(roads, walls=np.zeros((1, 4), np.float32), to="geopandas")
    with pytest.raises(ValueError, match="polygons are in EPSG:4326, segments in EPSG:3857"):
        engine.hits(roads, polygons=parcels.to_crs("EPSG:4326"))


def test_polygons_from_a_geodataframe_carry_its_index_beside_their_number(engine):
    roads = gpd.GeoSeries([shapely.LineString([(0, 5), (20, 5)]), shapely.LineString([(100, 100), (101, 101)])])
    parcels = gpd.GeoDataFrame(
        {"parcel": ["north", "south"]},
        geometry=[shapely.box(30, 0, 32, 10), shapely.box(10, 0, 12, 10)],
    ).set_index("parcel")
    first = engine.first_hit(roads, polygons=parcels, to="pandas")
    assert list(first.columns[:5]) == ["line", "line_segment", "segment", "polygon", "polygon_index"]
    assert first["polygon"].tolist()[0] == 1 and first["polygon_index"].tolist()[0] == "south"
    assert first["polygon_index"].isna().tolist() == [False, True]
    arrow = engine.first_hit(roads, polygons=parcels, to="arrow")
    assert arrow.column("polygon_index").to_pylist() == ["south", None]
    counts = engine.counts(roads, polygons=parcels, to="geopandas")
    assert counts[["polygon", "polygon_index", "hits"]].values.tolist() == [[0, "north", 0], [1, "south", 1]]
    # Arrays carry none: their rows are numbers.
    rings = [np.asarray(p.exterior.coords, np.float32) for p in parcels.geometry]
    assert "polygon_index" not in engine.first_hit(roads, polygons=rings, to="pandas").columns


PARCELS_WKT = """SRID=4326;POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0), (1 1, 3 1, 3 3, 1 3, 1 1))

  SRID=4326;MULTIPOLYGON (((0 6, 4 6, 4 6, 4 10, 0 10, 0 6)), ((6 6, 8 6, 8 8, 6 8, 6 6)))
"""

ROADS_WKT = """LINESTRING (-1 2, 9 2, 9 2, 9 7)
MULTILINESTRING ((-1 7, 5 7), (7 9, 7 9), (7 -1, 7 9, 0.1 11))
"""


def test_wkt_and_geojson_files_read_as_the_same_shapely_geometry_does(engine, tmp_path):
    """read_polygons and read_polylines (the CLI's parser) give what from_shapely gives for the
    same geometry (a repeated vertex dropped in both, EWKT's SRID said and ignored), from WKT
    and GeoJSON, gzipped too; and the engine's rows over them are the same."""
    import gzip

    parcels = shapely.from_wkt([line.split(";")[1] for line in PARCELS_WKT.splitlines() if line.strip()])
    roads = shapely.from_wkt(ROADS_WKT.splitlines())
    (tmp_path / "p.wkt").write_text(PARCELS_WKT)
    with gzip.open(tmp_path / "r.wkt.gz", "wt") as f:
        f.write(ROADS_WKT)
    gpd.GeoSeries(parcels, crs="EPSG:4326").to_file(tmp_path / "p.geojson", driver="GeoJSON")
    gpd.GeoSeries(roads, crs="EPSG:4326").to_file(tmp_path / "r.geojson", driver="GeoJSON")
    want_polygons = rectcast.from_shapely(parcels)
    want_lines = rectcast.from_shapely(roads)
    with pytest.warns(rectcast.SridWarning, match="p.wkt: EWKT SRID=4326, ignored"):
        from_wkt = rectcast.read_polygons(tmp_path / "p.wkt")
    for got in [from_wkt, rectcast.read_polygons(tmp_path / "p.geojson")]:
        for got_array, want_array in zip(got, want_polygons):
            np.testing.assert_array_equal(got_array, want_array)
    for path in [tmp_path / "r.wkt.gz", tmp_path / "r.geojson"]:
        lines = rectcast.read_polylines(path)
        assert lines.rows == 2
        for field in ["segments", "line", "line_segment"]:
            np.testing.assert_array_equal(getattr(lines, field), getattr(want_lines, field), err_msg=f"{path} {field}")
        hits = engine.hits(lines, polygons=from_wkt)
        assert_same_rows(hits, engine.hits(want_lines, polygons=want_polygons))
    # Across the hole, into the multipolygon's second part: rings past the shell are met.
    assert len(hits) >= 4 and (hits["entry_ring"] > 0).any() and (hits["exit_ring"] > 0).any()


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("b.wkt", "POLYGON ((0 0, 1 0, 1 1, 0 0))\n  LINESTRING (0 0, 1 1)\n", "b.wkt:2:3: polygon 1: a LINESTRING, not a POLYGON"),
        # The first bad geometry in the file's order, whatever is wrong with each.
        ("b.wkt", "POLYGON ((0 0, 2 2, 2 0, 0 2, 0 0))\nPOINT (0 0)\n", "b.wkt:1:1: polygon 0: ring is not simple"),
        ("b.wkt", "POLYGON ((0 0, 1 0, 1 1, 0 0)) x\n", "b.wkt:1:32: polygon 0: not WKT: text after the geometry"),
        ("b.wkt", "POLYGON ((0 0, 2 2, 2 0, 0 2, 0 0))\n", "b.wkt:1:1: polygon 0: ring is not simple"),
        ("b.wkt", "POLYGON ((0 0, 1 0, 1 1, 0 0)\n", "b.wkt:1:30: polygon 0: not WKT"),
        ("b.wkt", "POLYGON ((0 0, 1 0, 1 nan, 0 0))\n", "b.wkt:1:23: polygon 0: not WKT"),
        ("b.wkt", "POLYGON Z ((0 0 1, 1 0 1, 1 1 1, 0 0 1))\n", "b.wkt:1:1: polygon 0: a POLYGON Z: rectcast is 2-d"),
        ("b.wkt", "POLYGON ((0 0, 4 0, 4 4, 0 0), (1 1, 2 1, 2 2))\n", "b.wkt:1:1: polygon 0: ring 1 is not closed"),
        (
            "b.geojson",
            '{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {}, '
            '"geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]}}, '
            '{"type": "Feature", "properties": {}, "geometry": {"type": "Point", "coordinates": [0, 0]}}]}',
            "b.geojson: feature 1: polygon 1: a Point, not a Polygon or MultiPolygon",
        ),
        ("b.json", "{", "b.json: not GeoJSON"),
        # Nested thousands deep: an error at the parenthesis past the bound, not a crash.
        (
            "b.wkt",
            "GEOMETRYCOLLECTION (" * 3000 + "POINT (0 0)" + ")" * 3000 + "\n",
            "b.wkt:1:1300: polygon 0: not WKT that rectcast reads: parentheses nested over 64 deep",
        ),
        (
            "b.wkt",
            "CURVEPOLYGON (CIRCULARSTRING (0 0, 1 1, 2 0, 1 -1, 0 0))\n",
            "b.wkt:1:1: polygon 0: a CURVEPOLYGON, a WKT type rectcast does not read",
        ),
        ("b.txt", "POLYGON ((0 0, 1 0, 1 1, 0 0))\n", "b.txt: geometry is read from .wkt, .geojson or .json"),
    ],
)
def test_a_bad_geometry_file_is_refused_naming_its_place(tmp_path, name, text, message):
    (tmp_path / name).write_text(text)
    with pytest.raises(ValueError, match=re.escape(message)):
        rectcast.read_polygons(tmp_path / name)


def test_a_midpoint_vertex_and_an_empty_ring_read_alike_from_wkt_and_geojson(tmp_path):
    """116.939853668212890625 is halfway between two float32 values: both files give the even
    one (GeoJSON's parser was one unit in the last place off), and an EMPTY ring is absent."""
    mid = "116.939853668212890625"
    (tmp_path / "p.wkt").write_text(f"POLYGON (({mid} -10, 200 -10, 200 10, {mid} 10, {mid} -10), EMPTY)\n")
    (tmp_path / "p.geojson").write_text(
        '{"type": "Polygon", "coordinates": '
        f"[[[{mid}, -10], [200, -10], [200, 10], [{mid}, 10], [{mid}, -10]]]}}"
    )
    even = np.float32(116.93984985351562)
    assert even.view(np.uint32) % 2 == 0
    for name in ["p.wkt", "p.geojson"]:
        vertices, ring_offsets, _ = rectcast.read_polygons(tmp_path / name)
        assert len(ring_offsets) == 2, f"{name}: one ring, {ring_offsets}"
        assert vertices[0, 0].view(np.uint32) == even.view(np.uint32), f"{name}: {vertices[0, 0]!r}"


def test_a_line_file_refuses_what_is_not_a_line_naming_its_place(tmp_path):
    (tmp_path / "r.wkt").write_text("LINESTRING (0 0, 1 1)\nLINESTRING EMPTY\n")
    with pytest.raises(ValueError, match=re.escape("r.wkt:2:1: an empty line")):
        rectcast.read_polylines(tmp_path / "r.wkt")


def segment_lines(lines, rows):
    """Each row's segment (``line``, ``line_segment``) of ``lines`` as a shapely line, in
    float64: vertices repeated in a row dropped, as rectcast drops them."""
    vertices = []
    for line in lines.array:
        v = np.asarray(line.coords)
        vertices.append(v[np.r_[True, (np.diff(v, axis=0) != 0).any(axis=1)]])
    ends = [vertices[i][k : k + 2] for i, k in zip(rows["line"], rows["line_segment"])]
    return shapely.linestrings(np.asarray(ends).reshape(-1, 2, 2))


def test_geometry_far_from_the_origin_is_answered_in_a_frame_near_it(engine, far_scene):
    roads, parcels = far_scene(11)
    tree = shapely.STRtree(parcels.array)
    road_of, parcel_of = tree.query(roads.array, predicate="intersects")
    want = set(zip(road_of.tolist(), parcel_of.tolist()))
    # Roads 0.2 beside a parcel are among them: rounded where they are, they would touch it.
    near = tree.query(roads.array, predicate="dwithin", distance=0.25)
    assert len(set(zip(*map(np.ndarray.tolist, near))) - want) > 20
    hits = engine.hits(roads, polygons=parcels, to="geopandas")
    got = set(zip(hits["line"].tolist(), hits["polygon"].tolist()))
    assert got == want, f"rectcast only: {sorted(got - want)[:3]}, GEOS only: {sorted(want - got)[:3]}"
    # The frame: the parcels' centre, in whole units; rounding there moved nothing far.
    assert hits.attrs["origin"] == (-8239850.0, 4970150.0) or max(abs(v) for v in hits.attrs["origin"]) > 4e6
    assert hits.attrs["displacement"] < 1e-4
    # The geometry back in the user's frame: the pieces GEOS finds.
    pieces = shapely.intersection(segment_lines(roads, hits), parcels.array[hits["polygon"]])
    assert (shapely.hausdorff_distance(hits.geometry.array, pieces) < 1e-3).all()
    assert np.allclose(hits.geometry.length, shapely.length(pieces), atol=1e-3)
    # A given origin answers the same; no origin answers about the rounded vertices, and says so.
    given = engine.hits(roads, polygons=parcels, origin=(-8239800, 4970100))
    assert set(zip(given["segment"].tolist(), given["polygon"].tolist())) == set(
        zip(hits["segment"].tolist(), hits["polygon"].tolist())
    )
    with pytest.warns(rectcast.RoundingWarning, match=r"a vertex moved by 0\.2.*origin=\(x, y\)"):
        unshifted = engine.hits(roads, polygons=parcels, origin=None, to="pandas")
    assert len(unshifted) > len(hits) and unshifted.attrs["displacement"] == pytest.approx(0.2, abs=1e-6)
    # Arrays given with an origin are shifted the same way: the same rows as the geometry.
    lines = rectcast.from_shapely(roads, origin=hits.attrs["origin"])
    polygons = rectcast.from_shapely(parcels, origin=hits.attrs["origin"])
    assert_same_rows(engine.hits(lines, polygons=polygons, origin=None), engine.hits(roads, polygons=parcels))
    with pytest.raises(ValueError, match=r'origin: expected "auto", None or two finite numbers \(x, y\), found'):
        engine.hits(roads, polygons=parcels, origin=(1, float("nan")))


def test_wkt_far_from_the_origin_reads_at_a_given_one_as_the_cli_does(engine, far_scene, tmp_path):
    roads, parcels = far_scene(13)
    (tmp_path / "r.wkt").write_text("\n".join(shapely.to_wkt(roads.array, rounding_precision=-1)) + "\n")
    (tmp_path / "p.wkt").write_text("\n".join(shapely.to_wkt(parcels.array, rounding_precision=-1)) + "\n")
    want = engine.hits(roads, polygons=parcels, to="pandas")
    origin = want.attrs["origin"]
    assert origin == rectcast.geometry.auto_origin(parcels.total_bounds)
    lines = rectcast.read_polylines(tmp_path / "r.wkt", origin=origin)
    polygons = rectcast.read_polygons(tmp_path / "p.wkt", origin=origin)
    got = engine.hits(lines, polygons=polygons, origin=None)
    assert_same_rows(got, engine.hits(roads, polygons=parcels))
    with pytest.warns(rectcast.RoundingWarning, match=r"r.wkt: rounding to float32 at origin \(0.0, 0.0\) moved a vertex by 0.2"):
        rectcast.read_polylines(tmp_path / "r.wkt")


def test_a_clip_with_an_origin_gives_its_coordinates_back_in_the_users_frame(engine):
    segments = np.array([[-8240010.0, 4970005.25, -8239990.0, 4970005.25]])
    with pytest.raises(ValueError, match="x0 less the origin is .* float32 cannot hold exactly"):
        engine.clip(segments, [-8240000, 4970000, -8239995, 4970010], origin=(0.1, 0))
    clipped = engine.clip(segments, [-8240000, 4970000, -8239995, 4970010], origin=(-8240000, 4970000))
    assert clipped.dtype["x0"] == np.float64
    assert [clipped[c][0] for c in ("x0", "y0", "x1", "y1")] == [-8240000.0, 4970005.25, -8239995.0, 4970005.25]


def test_hit_geometry_over_holes_parts_and_notches_is_the_pieces_inside(engine):
    """A segment across a hole, between a multipolygon's parts or through a notch leaves the
    polygon and comes back: its row's geometry is the pieces inside (GEOS's intersection),
    so road length per parcel adds up; over a convex polygon, its span."""
    holed = shapely.Polygon([(0, 0), (40, 0), (40, 10), (0, 10)], [[(15, 2), (28, 2), (28, 8), (15, 8)]])
    parts = shapely.MultiPolygon([shapely.box(50, 0, 60, 10), shapely.box(70, 0, 80, 10)])
    notched = shapely.Polygon([(0, 20), (30, 20), (30, 30), (20, 30), (20, 24), (10, 24), (10, 30), (0, 30)])
    island = shapely.MultiPolygon([holed, shapely.box(18, 4, 22, 6)])  # an island in the hole
    rng = np.random.default_rng(5)
    ends = rng.integers(-5, 90, (300, 4)).astype(float)
    ends[:100, 1] = ends[:100, 3] = rng.integers(0, 31, 100)  # horizontal, along edges too
    roads = gpd.GeoSeries(shapely.linestrings(ends.reshape(-1, 2, 2)))
    parcels = gpd.GeoSeries([holed, parts, notched, shapely.box(85, 0, 89, 30), island])
    for query in ("hits", "first_hit", "pairs"):
        rows = getattr(engine, query)(roads, polygons=parcels, to="geopandas")
        hit = rows["polygon"].notna() & rows["t_enter"].notna()
        pieces = shapely.intersection(roads.array[rows["line"][hit]], parcels.array[rows["polygon"][hit].astype(int)])
        got = rows.geometry[hit].array
        assert (shapely.hausdorff_distance(got, pieces) < 1e-4).all(), query
        assert np.allclose(shapely.length(got), shapely.length(pieces), atol=1e-4), query
        assert (rows.geometry.isna() == ~hit).all()
    hits = engine.hits(roads, polygons=parcels, to="geopandas")
    assert (hits.geometry.geom_type == "MultiLineString").sum() > 20
    # The same from the flat form, rings given as arrays (a multipolygon as its parts' rings).
    flat = rectcast.from_shapely(parcels)
    again = engine.hits(roads, polygons=flat, to="geopandas")
    assert (shapely.hausdorff_distance(again.geometry.array, hits.geometry.array) < 1e-4).all()


def test_counts_on_a_geodataframe_keep_its_columns(engine):
    roads = gpd.GeoSeries([shapely.LineString([(0, 5), (20, 5)])])
    parcels = gpd.GeoDataFrame(
        {"owner": ["ann", "bo"], "hits": [7, 8], "area": [20.0, 20.0]},
        geometry=[shapely.box(30, 0, 32, 10), shapely.box(10, 0, 12, 10)],
        index=["north", "south"],
    )
    for to in ("pandas", "geopandas"):
        counts = engine.counts(roads, polygons=parcels, to=to)
        assert list(counts.columns[:6]) == ["polygon", "polygon_index", "hits", "owner", "hits_target", "area"]
        assert counts["owner"].tolist() == ["ann", "bo"] and counts["hits_target"].tolist() == [7, 8]
        assert counts["hits"].tolist() == [0, 1]
    assert isinstance(counts, gpd.GeoDataFrame) and counts.geometry.equals(parcels.geometry.reset_index(drop=True))


def test_an_invalid_parcel_is_named_by_its_label_and_may_be_skipped(engine):
    bow_tie = shapely.Polygon([(0, 0), (10, 10), (10, 0), (0, 10)])
    parcels = gpd.GeoDataFrame(
        {"owner": ["ann", "bo", "cy"]},
        geometry=[shapely.box(0, 0, 4, 4), bow_tie, shapely.box(20, 0, 30, 10)],
        index=["north", "bow", "south"],
    )
    roads = gpd.GeoSeries([shapely.LineString([(-5, 2), (40, 2)])])
    message = r"polygons: polygon 1 \(label 'bow'\): ring is not simple: .*shapely.make_valid .*skip_invalid=True"
    with pytest.raises(ValueError, match=message):
        engine.hits(roads, polygons=parcels)
    with pytest.warns(rectcast.SkippedWarning, match="skipped 1 invalid polygons: polygon 1: ring is not simple"):
        hits = engine.hits(roads, polygons=parcels, to="geopandas", skip_invalid=True)
    assert hits["polygon_index"].tolist() == ["north", "south"] and hits.attrs["skipped"]["polygons"] == [1]
    assert np.allclose(hits.geometry.length, [4, 10], atol=1e-4)
    with pytest.warns(rectcast.SkippedWarning):
        counts = engine.counts(roads, polygons=parcels, to="geopandas", skip_invalid=True)
    assert counts["polygon_index"].tolist() == ["north", "south"] and counts["owner"].tolist() == ["ann", "cy"]
    assert counts.geometry.equals(parcels.geometry.iloc[[0, 2]].reset_index(drop=True))
