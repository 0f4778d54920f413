"""The Python package against the Rust library (through the `rectcast` binary's .npy output,
byte for byte), Arrow in and out, bad input, and the GIL released while the engine runs."""

import math
import os
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import rectcast

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("RECTCAST_BIN", ROOT / "target" / "release" / "rectcast"))


def cli(*args):
    """Runs the rectcast binary (the Rust library's own results); fails the test on error."""
    assert BIN.exists(), f"{BIN} is missing: build it with `cargo build --release`"
    done = subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module", params=["bullet-hell", "adversarial"])
def scene(request, tmp_path_factory):
    """A seeded scene written by `rectcast gen`: (segments, rects, folder)."""
    folder = tmp_path_factory.mktemp(request.param)
    cli("gen", "--kind", request.param, "--segments", 3000, "--rects", 70,
        "--format", "npy", "--out-dir", folder, "--seed", 11)
    segments = np.load(folder / "segments.npy")
    rects = np.load(folder / "rects.npy")
    assert segments.dtype == np.float32 and segments.shape == (3000, 4)
    return segments, rects, folder


@pytest.fixture(scope="module")
def engine():
    return rectcast.Engine("cpu")


def assert_same_bytes(got, want, what):
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} vs the CLI's {want.dtype}"
    assert len(got) == len(want), f"{what}: {len(got)} rows vs {len(want)}"
    if got.tobytes() != want.tobytes():
        differ = np.flatnonzero(got.view(np.void) != want.view(np.void))
        i = int(differ[0])
        pytest.fail(f"{what}: first difference at row {i}: {got[i]} vs the CLI's {want[i]}")


@pytest.mark.parametrize("query", ["pairs", "first-hit", "hits", "count"])
def test_numpy_results_equal_the_cli_npy_byte_for_byte(scene, engine, query):
    segments, rects, folder = scene
    out = folder / f"{query}.npy"
    cli(query, "--backend", "cpu", "--segments", folder / "segments.npy",
        "--rects", folder / "rects.npy", "--out", out)
    method = {"first-hit": "first_hit", "count": "counts"}.get(query, query)
    got = getattr(engine, method)(segments, rects)
    assert_same_bytes(got, np.load(out), query)


def test_wall_pairs_equal_the_cli_npy_byte_for_byte(scene, engine):
    segments, _, folder = scene
    # The first 200 segments against the next 150, as walls: the same file format.
    queries, walls = segments[:200], np.ascontiguousarray(segments[200:350])
    np.save(folder / "queries.npy", queries)
    np.save(folder / "walls.npy", walls)
    out = folder / "walls-out.npy"
    cli("pairs", "--backend", "cpu", "--segments", folder / "queries.npy",
        "--walls", folder / "walls.npy", "--out", out)
    got = engine.wall_pairs(queries, walls)
    assert_same_bytes(got, np.load(out), "wall pairs")
    assert got.dtype.names == ("segment", "wall", "hit", "contact", "t_enter", "t_exit")
    assert got["hit"].any(), "the scene needs segments that meet"
    names = rectcast.wall_pairs(queries, walls, to="arrow").column("contact").to_pylist()
    assert set(names) <= set(rectcast.CONTACT_NAMES) and "miss" in names
    with pytest.raises(ValueError, match="wall 1"):
        bad = walls.copy()
        bad[1, 0] = np.nan
        engine.wall_pairs(queries, bad)


def test_circle_pairs_give_the_contracts_kinds_and_t(engine):
    # docs/semantics.md, "Segment x circle": a crossing at 1/4 and 3/4, a tangent at 1/2, an
    # exit from the center, a miss beyond the end.
    segments = np.array(
        [[0, 0, 4, 0], [0, 1, 4, 1], [2, 0, 4, 0], [-4, 0, 0, 0]], dtype=np.float32
    )
    circles = np.array([[2, 0, 1]], dtype=np.float32)
    got = engine.circle_pairs(segments, circles)
    assert got.dtype.names == ("segment", "circle", "hit", "kind", "t_enter", "t_exit")
    names = [rectcast.CIRCLE_KIND_NAMES[k] for k in got["kind"]]
    assert names == ["cross", "tangent", "exit", "miss"]
    assert got["t_enter"][:3].tolist() == [0.25, 0.5, 0.0]
    assert got["t_exit"][:3].tolist() == [0.75, 0.5, 0.5]
    assert np.isnan(got["t_enter"][3]) and not got["hit"][3]
    arrow = rectcast.circle_pairs(segments, circles, to="arrow")
    assert arrow.column("kind").to_pylist() == names
    assert arrow.column("t_enter").to_pylist()[3] is None
    with pytest.raises(ValueError, match="circle 1: r is -1, below 0"):
        engine.circle_pairs(segments, np.array([[0, 0, 1], [0, 0, -1]], dtype=np.float32))
    with pytest.raises(ValueError, match=r"expected shape \(N, 3\)"):
        engine.circle_pairs(segments, np.zeros((2, 4), dtype=np.float32))


@pytest.mark.parametrize("query", ["pairs", "first-hit", "hits", "count"])
@pytest.mark.parametrize("shape", ["walls", "circles"])
def test_shape_queries_equal_the_cli_npy_byte_for_byte(scene, engine, query, shape):
    segments, _, folder = scene
    rng = np.random.default_rng(5)
    lo, hi = segments[:, :2].min(), segments[:, :2].max()
    if shape == "circles":
        shapes = np.column_stack(
            [rng.uniform(lo, hi, 120), rng.uniform(lo, hi, 120), rng.uniform(0, (hi - lo) / 8, 120)]
        ).astype(np.float32)
    else:
        shapes = np.ascontiguousarray(segments[-120:])
    queries = segments[:300]
    np.save(folder / "queries.npy", queries)
    np.save(folder / f"{shape}.npy", shapes)
    out = folder / f"{shape}-{query}.npy"
    cli(query, "--backend", "cpu", "--segments", folder / "queries.npy",
        f"--{shape}", folder / f"{shape}.npy", "--out", out)
    method = {"first-hit": "first_hit", "count": "counts"}.get(query, query)
    got = getattr(engine, method)(queries, **{shape: shapes})
    assert_same_bytes(got, np.load(out), f"{query} --{shape}")
    if query == "pairs":
        assert got["hit"].any() and not got["hit"].all()
        alias = engine.wall_pairs if shape == "walls" else engine.circle_pairs
        assert_same_bytes(alias(queries, shapes), got, f"{shape} alias")


def _star_polygons(rng, count, lo, hi):
    """Star-shaped rings (simple by construction): (vertices float32, offsets int64)."""
    rings = []
    for _ in range(count):
        # Angles a step apart, jittered by half a step: every gap below pi, so each edge stays
        # in its wedge around the center and the ring is simple.
        n = int(rng.integers(4, 12))
        angles = (np.arange(n) + rng.uniform(0, 0.5, n)) * (2 * np.pi / n)
        radii = rng.uniform((hi - lo) / 60, (hi - lo) / 12, n)
        cx, cy = rng.uniform(lo, hi, 2)
        rings.append(np.column_stack([cx + radii * np.cos(angles), cy + radii * np.sin(angles)]))
    vertices = np.concatenate(rings).astype(np.float32)
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in rings])]).astype(np.int64)
    return vertices, offsets


@pytest.mark.parametrize("query", ["pairs", "first-hit", "hits", "count"])
def test_polygon_queries_equal_the_cli_npy_byte_for_byte(scene, engine, query):
    segments, _, folder = scene
    rng = np.random.default_rng(9)
    lo, hi = segments[:, :2].min(), segments[:, :2].max()
    vertices, offsets = _star_polygons(rng, 60, lo, hi)
    queries = segments[:300]
    np.save(folder / "queries.npy", queries)
    np.save(folder / "vertices.npy", vertices)
    np.save(folder / "offsets.npy", offsets)
    out = folder / f"polygons-{query}.npy"
    cli(query, "--backend", "cpu", "--segments", folder / "queries.npy",
        "--polygons", folder / "vertices.npy", "--polygon-offsets", folder / "offsets.npy",
        "--out", out)
    method = {"first-hit": "first_hit", "count": "counts"}.get(query, query)
    got = getattr(engine, method)(queries, polygons=(vertices, offsets))
    assert_same_bytes(got, np.load(out), f"{query} --polygons")
    if query == "pairs":
        assert got["hit"].any() and not got["hit"].all()
        rings = [vertices[a:b] for a, b in zip(offsets[:-1], offsets[1:])]
        assert_same_bytes(engine.polygon_pairs(queries, rings), got, "rings")


def test_polygons_give_the_contracts_kinds_edges_and_errors(engine):
    # docs/semantics.md, "Segment x polygon": the square [0, 4]^2, edge 0 along y = 0.
    square = [[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]]
    segments = np.array([[-2, 1, 6, 1], [1, 1, 2, 2], [5, 5, 6, 6]], dtype=np.float32)
    got = engine.polygon_pairs(segments, [square])
    assert [rectcast.KIND_NAMES[k] for k in got["kind"]] == ["cross", "inside", "miss"]
    assert got["t_enter"][:2].tolist() == [0.25, 0.0]
    assert got["entry_edge"].tolist() == [3, -1, -1]
    assert got["exit_edge"].tolist() == [1, -1, -1]
    arrow = rectcast.polygon_pairs(segments, [square], to="arrow")
    assert arrow.column("entry_edge").to_pylist() == [3, None, None]
    bowtie = [[0, 0], [2, 2], [2, 0], [0, 2]]
    with pytest.raises(ValueError, match="polygon 1: ring is not simple: edges 0 and 2 meet"):
        engine.polygon_pairs(segments, [square, bowtie])
    with pytest.raises(ValueError, match=r"expected a ring of shape \(n, 2\)"):
        engine.polygon_pairs(segments, [np.zeros(6)])
    with pytest.raises(ValueError, match="offsets must run from 0"):
        engine.polygon_pairs(segments, (np.zeros((3, 2), np.float32), np.array([0, 2])))
    inner = [[1, 1], [2, 1], [2, 2]]
    far = [[10, 10], [11, 10], [11, 11]]
    pairs = engine.overlaps([square, far], [inner, far, [[4, 4], [5, 4], [5, 5]]])
    assert pairs.dtype.names == ("polygon", "other")
    assert pairs.tolist() == [(0, 0), (0, 2), (1, 1)]


def test_clip_results_equal_the_cli_npy_byte_for_byte(scene, engine):
    segments, rects, folder = scene
    out = folder / "clip.npy"
    cli("clip", "--backend", "cpu", "--segments", folder / "segments.npy",
        "--rect", "100,100,900,700", "--out", out)
    assert_same_bytes(engine.clip(segments, (100, 100, 900, 700)), np.load(out), "clip")
    # One rect per segment: row i for segment i.
    per = np.ascontiguousarray(np.resize(rects, (len(segments), 4)))
    np.save(folder / "per.npy", per)
    cli("clip", "--backend", "cpu", "--segments", folder / "segments.npy",
        "--rects", folder / "per.npy", "--out", out)
    assert_same_bytes(engine.clip(segments, rects=per), np.load(out), "clip per segment")


def test_the_module_functions_use_one_auto_engine(scene):
    segments, rects, _ = scene
    assert rectcast.default_engine() is rectcast.default_engine()
    want = rectcast.Engine("cpu").first_hit(segments, rects)
    got = rectcast.first_hit(segments, rects)
    # auto may run on a GPU, whose t may differ in the last bits (issue 13): decisions equal.
    for field in ("segment", "rect", "kind", "entry", "exit"):
        assert np.array_equal(got[field], want[field]), field


def test_first_hit_rects_are_first_hits_rect_column(scene, engine):
    segments, rects, _ = scene
    want = engine.first_hit(segments, rects)["rect"]
    got = engine.first_hit_rects(segments, rects)
    assert got.dtype == np.int64 and got.shape == want.shape
    assert (got < 0).any() and (got >= 0).any(), "the scene needs hits and misses"
    assert np.array_equal(got, want)
    # The module function, on the auto engine: rects are decisions, the same everywhere.
    assert np.array_equal(rectcast.first_hit_rects(segments, rects), want)


def test_arrow_results_hold_the_numpy_rows_with_nulls_and_names(scene, engine):
    segments, rects, _ = scene
    rows = engine.first_hit(segments, rects)
    batch = engine.first_hit(segments, rects, to="arrow")
    assert isinstance(batch, pa.RecordBatch)
    assert batch.schema.names == list(rows.dtype.names)
    miss = rows["rect"] < 0
    assert miss.any() and (~miss).any(), "the scene needs hits and misses"
    assert batch.column("rect").is_null().to_numpy(zero_copy_only=False).tolist() == miss.tolist()
    assert np.array_equal(batch.column("rect").to_numpy(zero_copy_only=False)[~miss].astype(np.int64),
                          rows["rect"][~miss])
    kinds = batch.column("kind").to_pylist()
    assert kinds == [rectcast.KIND_NAMES[k] for k in rows["kind"]]
    t = batch.column("t_enter").to_numpy(zero_copy_only=False)
    assert np.array_equal(np.isnan(t), miss) and np.array_equal(t[~miss], rows["t_enter"][~miss])
    entry = batch.column("entry").to_pylist()
    assert entry == [rectcast.SIDE_NAMES[b] or None for b in rows["entry"]]
    assert "min_x+min_y" in rectcast.SIDE_NAMES


@pytest.mark.parametrize("query", ["pairs", "first-hit", "hits", "count"])
def test_arrow_results_equal_the_cli_parquet_output(scene, engine, query):
    # scripts/test.sh builds the binary with the `parquet` feature last.
    import pyarrow.parquet as pq

    segments, rects, folder = scene
    out = folder / f"{query}.parquet"
    cli(query, "--backend", "cpu", "--segments", folder / "segments.npy",
        "--rects", folder / "rects.npy", "--out", out)
    want = pq.read_table(out)
    method = {"first-hit": "first_hit", "count": "counts"}.get(query, query)
    got = getattr(engine, method)(segments, rects, to="arrow")
    assert got.schema.names == want.schema.names, query
    for name in want.schema.names:
        assert got.column(name).type == want.column(name).type, f"{query}: {name}"
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), f"{query}: {name}"


def test_arrow_inputs_find_columns_by_name_among_others(scene, engine):
    segments, rects, _ = scene
    table = pa.table({
        "id": np.arange(len(segments)),
        "y1": segments[:, 3], "x0": segments[:, 0], "x1": segments[:, 2], "y0": segments[:, 1],
    })
    boxes = pa.record_batch({name: rects[:, i] for i, name in enumerate(rectcast.RECT_COLUMNS)})
    got = engine.first_hit(table, boxes)
    assert_same_bytes(got, engine.first_hit(segments, rects), "arrow input")
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=700))
    assert_same_bytes(engine.first_hit(reader, rects), got, "a stream of batches")


def test_other_dtypes_and_orders_are_converted_exactly_unless_copy_is_refused(scene, engine):
    segments, rects, _ = scene
    want = engine.first_hit(segments, rects)
    for other in (segments.astype(np.float64), np.asfortranarray(segments)):
        assert_same_bytes(engine.first_hit(other, rects), want, "converted input")
        assert_same_bytes(engine.first_hit(other, rects, copy=True), want, "copied input")
        with pytest.raises(TypeError, match="copy=False"):
            engine.first_hit(other, rects, copy=False)


@pytest.mark.parametrize(
    ("segments", "rects", "error", "message"),
    [
        ([[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, np.nan, 1]], [[0, 0, 1, 1]], ValueError, "segment 2: x1 is NaN"),
        ([[0, 0, 1, 1]], [[0, 0, 1, 1], [5, 0, 1, 1]], ValueError, "rect 1: min_x"),
        ([[0, 0, np.inf, 1]], [[0, 0, 1, 1]], ValueError, "segment 0: x1"),
        ([[0, 0, 1]], [[0, 0, 1, 1]], ValueError, r"segments: expected shape \(N, 4\)"),
        ([0, 0, 1, 1], [[0, 0, 1, 1]], ValueError, r"segments: expected shape \(N, 4\)"),
    ],
)
def test_invalid_inputs_raise_with_the_row_and_field(engine, segments, rects, error, message):
    s = np.array(segments, dtype=np.float32)
    r = np.array(rects, dtype=np.float32)
    with pytest.raises(error, match=message):
        engine.first_hit(s, r)


def test_wrong_types_and_nulls_are_errors_not_crashes(engine):
    rects = np.zeros((1, 4), np.float32)
    with pytest.raises(TypeError, match="segments: expected a numpy array"):
        engine.first_hit({"x0": 0}, rects)
    with pytest.raises(TypeError, match="expected real numbers"):
        engine.first_hit(np.array([["a", "b", "c", "d"]]), rects)
    nulls = pa.table({"x0": pa.array([0.0, None], pa.float32()), "y0": pa.array([0.0, 0.0], pa.float32()),
                      "x1": pa.array([1.0, 1.0], pa.float32()), "y1": pa.array([1.0, 1.0], pa.float32())})
    with pytest.raises(ValueError, match="segment 1: x0 is null"):
        engine.first_hit(nulls, rects)
    with pytest.raises(ValueError, match="no column y1"):
        engine.first_hit(pa.table({"x0": [0.0], "y0": [0.0], "x1": [1.0]}), rects)
    with pytest.raises(ValueError, match='backend: expected "auto", "gpu" or "cpu"'):
        rectcast.Engine("tpu")
    with pytest.raises(ValueError, match='to: expected "numpy", "arrow", "pandas" or "geopandas"'):
        engine.first_hit(np.zeros((1, 4), np.float32), rects, to="polars")


def test_empty_arrays_give_empty_results_of_the_same_fields(engine):
    empty = np.zeros((0, 4), np.float32)
    rects = np.array([[0, 0, 1, 1]], np.float32)
    for method in ("pairs", "first_hit", "hits", "counts"):
        got = getattr(engine, method)(empty, rects)
        assert got.dtype.names == getattr(engine, method)(rects[:, [0, 1, 2, 3]], rects).dtype.names
    assert len(engine.first_hit(empty, rects)) == 0
    assert len(engine.pairs(rects, empty)) == 0
    assert engine.counts(empty, rects)["hits"].tolist() == [0]


def test_the_engine_releases_the_gil_while_it_runs():
    # A thread counts in Python while the engine runs a long query on one core. Holding the GIL,
    # the engine would let it count only within one switch interval (5 ms) of the call.
    engine = rectcast.Engine("cpu", threads=1)
    rng = np.random.default_rng(3)
    segments = rng.uniform(0, 1000, (200_000, 4)).astype(np.float32)
    lo = rng.uniform(0, 900, (2000, 2)).astype(np.float32)
    rects = np.ascontiguousarray(np.hstack([lo, lo + 100]))
    counter = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            counter[0] += 1

    counting = threading.Thread(target=count)
    counting.start()
    try:
        start = counter[0]
        time.sleep(0.2)  # the counter alone, the GIL free: its rate
        rate = (counter[0] - start) / 0.2
        raw = engine._engine
        before = counter[0]
        began = time.perf_counter()
        raw.counts(segments, rects)
        took = time.perf_counter() - began
        during = counter[0] - before
    finally:
        stop.set()
        counting.join()
    assert took > 0.1, f"the call took {took:.3f} s: too short to tell"
    assert during > rate * took / 4, (
        f"Python counted {during} during a {took:.3f} s call, at {rate:.0f}/s alone: the GIL was held"
    )


def test_an_unaligned_buffer_is_read_from_an_aligned_copy(engine):
    # As distributed deserializes a large array: float32 values at an odd address.
    rects = np.array([[0, 0, 10, 10], [20, 20, 30, 30]], np.float32)
    raw = np.zeros(rects.nbytes + 1, np.uint8)
    unaligned = raw[1:].view(np.float32).reshape(2, 4)
    unaligned[:] = rects
    assert not unaligned.flags.aligned and unaligned.flags.c_contiguous
    segments = np.array([[-5, 2, 15, 8], [25, 0, 25, 40]], np.float32)
    assert_same_bytes(engine.first_hit(segments, unaligned), engine.first_hit(segments, rects), "unaligned")


def test_a_thread_count_past_the_bound_is_refused_at_once():
    with pytest.raises(ValueError, match="20000 CPU threads: at most 1024"):
        rectcast.Engine("cpu", threads=20000)


def _near_ties_within_a_kind(count):
    """Segment i from (x0, y0) by (dx, dy), coprime, u*dx - v*dy = 1: it crosses the line
    x = x0 + v at t = v/dx, 1/(dx*dy) (about 2^-26) before the line y = y0 + u at u/dy, often at
    the same float32. Each line holds a wall and a triangle's edge, the later-entered one at the
    lower index: walls (and triangles) 2i (y) and 2i + 1 (x)."""
    rng = np.random.default_rng(72)
    segments, walls, triangles = [], [], []
    for i in range(count):
        while True:
            dx, dy = (int(v) for v in rng.integers(4096, 8192, 2))
            if math.gcd(dx, dy) == 1:
                break
        u = next(u for u in range(1, dy) if u * dx % dy == 1)
        v = (u * dx - 1) // dy
        x0, y0 = i * 20_000, -int(rng.integers(0, 4096))
        segments.append([x0, y0, x0 + dx, y0 + dy])
        bx, by = x0 + v, y0 + u
        walls += [[bx - 5, by, bx + 5, by], [bx, by - 5, bx, by + 5]]
        triangles += [
            [[bx - 5, by], [bx + 5, by], [bx, by + 5], [bx - 5, by]],
            [[bx, by - 5], [bx + 5, by], [bx, by + 5], [bx, by - 5]],
        ]
    f32 = lambda rows: np.array(rows, dtype=np.float32)  # noqa: E731
    return f32(segments), f32(walls), [f32(t) for t in triangles]


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_first_hits_over_walls_and_polygons_go_to_the_exact_earliest_on_near_ties(backend):
    if backend == "gpu" and os.environ.get("RECTCAST_REQUIRE_GPU") != "1":
        try:
            rectcast.Engine("gpu")
        except Exception as error:  # noqa: BLE001 - any reason a GPU engine cannot open
            pytest.skip(f"no GPU engine: {error}")
    engine = rectcast.Engine(backend)
    segments, walls, triangles = _near_ties_within_a_kind(120)
    n = len(segments)
    # Rows whose two entries round alike, where only the exact order picks the higher index.
    pairs = engine.pairs(segments, walls=walls)["t_enter"].reshape(n, 2 * n)
    rows = np.arange(n)
    alike = int((pairs[rows, 2 * rows] == pairs[rows, 2 * rows + 1]).sum())
    assert alike > 20, f"{alike} rounded ties"
    for keyword, targets in [("walls", walls), ("polygons", triangles)]:
        got = engine.first_hit(segments, **{keyword: targets})
        assert (got["segment"] == rows).all()
        index = got[keyword[:-1]]  # its column: wall, polygon
        wrong = np.flatnonzero(index != 2 * rows + 1)
        assert wrong.size == 0, (
            f"{keyword} on the {backend}: segment {wrong[0]} {segments[wrong[0]]}: "
            f"{got[wrong[0]]}, not target {2 * wrong[0] + 1}, entered first"
        )


@pytest.mark.parametrize("query", ["pairs", "first-hit", "hits", "count"])
def test_skip_invalid_leaves_out_what_the_clis_skip_invalid_does_byte_for_byte(scene, engine, query, tmp_path):
    """NaN segments, a rect whose min exceeds its max, a NaN wall, a circle of negative radius
    and a bow-tie polygon: left out of the call, the rest numbered as given, as the CLI's
    ``--skip-invalid`` writes them; said once."""
    segments, rects, _ = scene
    segments = segments[:400].copy()
    segments[[3, 17]] = np.nan
    rects = rects.copy()
    rects[5] = [10, 10, 5, 20]
    walls = scene[0][500:560].copy()  # not a view: the scene is shared by the module
    walls[2, 1] = np.nan
    circles = np.ascontiguousarray(np.hstack([rects[:, :2], np.full((len(rects), 1), 6, np.float32)]))
    circles[4, 2] = -1
    squares = [np.array([[x, y], [x + 9, y], [x + 9, y + 9], [x, y + 9]], np.float32) for x, y in rects[:30, :2]]
    squares[1] = np.array([[0, 0], [10, 10], [10, 0], [0, 10]], np.float32)  # a bow-tie
    vertices = np.concatenate(squares)
    offsets = np.arange(0, 4 * len(squares) + 1, 4, dtype=np.int64)
    files = {"segments": segments, "rects": rects, "walls": walls, "circles": circles, "vertices": vertices}
    for name, array in files.items():
        np.save(tmp_path / f"{name}.npy", array)
    np.save(tmp_path / "offsets.npy", offsets)
    method = {"first-hit": "first_hit", "count": "counts"}.get(query, query)
    targets = {
        "rects": (["--rects", tmp_path / "rects.npy"], {"rects": rects}),
        "walls": (["--walls", tmp_path / "walls.npy"], {"walls": walls}),
        "circles": (["--circles", tmp_path / "circles.npy"], {"circles": circles}),
        "polygons": (
            ["--polygons", tmp_path / "vertices.npy", "--polygon-offsets", tmp_path / "offsets.npy"],
            {"polygons": (vertices, offsets)},
        ),
    }
    # Every kind at once: the CLI's mixed job.
    targets["every kind"] = (
        [flag for flags, _ in targets.values() for flag in flags],
        {keyword: value for _, given in targets.values() for keyword, value in given.items()},
    )
    for kind, (flags, given) in targets.items():
        out = tmp_path / f"{kind}-{query}.npy"
        cli(query, "--backend", "cpu", "--skip-invalid", "--segments", tmp_path / "segments.npy", *flags, "--out", out)
        with pytest.warns(rectcast.SkippedWarning, match=r"skipped 2 invalid segments and 1 invalid"):
            got = getattr(engine, method)(segments, **given, skip_invalid=True)
        assert_same_bytes(got, np.load(out), f"{kind} {query}")
        with pytest.warns(rectcast.SkippedWarning):
            frame = getattr(engine, method)(segments, **given, skip_invalid=True, to="pandas")
        assert frame.attrs["skipped"]["segments"] == [3, 17], kind
    with pytest.raises(ValueError, match="segment 3: x0 is NaN"):
        getattr(engine, method)(segments, rects)


def _every_kind(scene, folder):
    """300 of the scene's segments, and targets of every kind around them, each saved in
    ``folder`` as the CLI reads it: (segments, {keyword: targets}, the CLI's flags)."""
    segments, rects, _ = scene
    queries = np.ascontiguousarray(segments[:300])
    lo, hi = segments[:, :2].min(), segments[:, :2].max()
    walls = np.ascontiguousarray(segments[1000:1080])
    circles = np.ascontiguousarray(np.hstack([rects[:40, :2], np.full((40, 1), (hi - lo) / 40, np.float32)]))
    vertices, offsets = _star_polygons(np.random.default_rng(5), 40, lo, hi)
    for name, array in [("queries", queries), ("rects", rects), ("walls", walls), ("circles", circles),
                        ("vertices", vertices), ("offsets", offsets)]:
        np.save(folder / f"{name}.npy", array)
    flags = ["--segments", folder / "queries.npy", "--rects", folder / "rects.npy", "--walls",
             folder / "walls.npy", "--circles", folder / "circles.npy", "--polygons",
             folder / "vertices.npy", "--polygon-offsets", folder / "offsets.npy"]
    given = {"rects": rects, "walls": walls, "circles": circles, "polygons": (vertices, offsets)}
    return queries, given, flags


@pytest.mark.parametrize("query", ["pairs", "first-hit", "hits", "count"])
def test_a_query_over_every_kind_at_once_is_the_clis_mixed_job_byte_for_byte(scene, engine, query, tmp_path):
    queries, given, flags = _every_kind(scene, tmp_path)
    out = tmp_path / f"mixed-{query}.npy"
    cli(query, "--backend", "cpu", *flags, "--out", out)
    method = {"first-hit": "first_hit", "count": "counts"}.get(query, query)
    got = getattr(engine, method)(queries, **given)
    assert_same_bytes(got, np.load(out), f"{query} over every kind")
    # The scene tests what it says: every kind is hit (a count's rows list every target).
    hit = got["hits"] > 0 if query == "count" else got["target_kind"] > 0
    if "hit" in got.dtype.names:
        hit &= got["hit"]
    kinds = set(np.unique(got["target_kind"][hit]).tolist())
    # First hits of every kind but one at least (the adversarial scene's walls are always behind).
    assert kinds == {1, 2, 3, 4} or (query == "first-hit" and len(kinds) >= 3), kinds


def test_each_kinds_hits_in_a_query_over_every_kind_are_that_kinds_own(scene, engine, tmp_path):
    queries, given, _ = _every_kind(scene, tmp_path)
    mixed = engine.hits(queries, **given)
    for code, (name, fields) in enumerate(rectcast._TARGET_KINDS, 1):
        keyword = rectcast._TARGET_KEYWORDS[code - 1]
        own = engine.hits(queries, **{keyword: given[keyword]})
        mine = mixed[mixed["target_kind"] == code]
        assert len(mine) == len(own) > 0, name
        for field in ["segment", *fields]:
            assert mine[field].tobytes() == own[field].tobytes(), f"{name}: {field}"
        assert (mine["target"] == own[name]).all(), name


def test_a_wall_crossed_under_half_an_ulp_before_a_rect_is_the_first_hit_over_both(engine):
    """Along y = 0 from x = 0 to 3: a wall crossed at x = 1 - 2^-27 and a rect entered at
    x = 1, the same float32 t; the wall comes first though rects come first among kinds.
    Reversed, the rect is met first."""
    segments = np.array([[0, 0, 3, 0], [3, 0, 0, 0]], np.float32)
    rects = np.array([[1, -1, 2, 1]], np.float32)
    walls = np.array([[5, 5, 6, 6], [1, -1, 1 - 2**-24, 7]], np.float32)
    first = engine.first_hit(segments, rects, walls=walls, to="pandas")
    assert first["target_kind"].tolist() == ["wall", "rect"]
    assert first["target"].tolist() == [1, 0]
    assert first["t_enter"].tolist() == [np.float32(1 / 3)] * 2
    # Each row's other kinds' categories are absent, not a "miss".
    assert first["contact"].isna().tolist() == [False, True]
    assert first["kind"].isna().tolist() == [True, False]


def test_a_query_over_several_kinds_says_what_it_cannot_do(engine):
    segments = np.array([[0, 0, 3, 0]], np.float32)
    rects = np.array([[1, -1, 2, 1]], np.float32)
    walls = np.array([[5, 5, 6, 6]], np.float32)
    with pytest.raises(ValueError, match=r"first_hit: to='geopandas' takes one kind of target; with several \(rects, walls\)"):
        engine.first_hit(segments, rects, walls=walls, to="geopandas")
    miss = engine.first_hit(segments, walls=walls, circles=np.array([[9, 9, 1]], np.float32), to="arrow")
    assert miss.column("target_kind").null_count == 1 and miss.column("target").null_count == 1
