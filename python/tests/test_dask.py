"""rectcast.dask on a real multi-process Dask cluster, over a multi-file Parquet dataset: the
same rows as the single-process call, and a worker killed mid-job loses and repeats nothing."""

import os
import signal
import sys
import time

import numpy as np
import pandas as pd
import pytest

import rectcast
import rectcast.dask

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with cluster, distributed.Client(cluster) as client:
        yield client


def dataset(folder, segments, files):
    """`segments` written as `files` Parquet files of float32 columns, with an id beside them."""
    folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(segments)), files)):
        frame = pd.DataFrame({
            "id": part,
            "y0": segments[part, 1], "x0": segments[part, 0],
            "x1": segments[part, 2], "y1": segments[part, 3],
        })
        frame.to_parquet(folder / f"part-{i:03}.parquet", index=False)
    return dd.read_parquet(str(folder))


def scene(seed, n, m, spread=1000.0):
    rng = np.random.default_rng(seed)
    start = rng.uniform(0, spread, (n, 2))
    segments = np.hstack([start, start + rng.normal(0, 40, (n, 2))]).astype(np.float32)
    lo = rng.uniform(0, spread, (m, 2))
    rects = np.hstack([lo, lo + rng.uniform(5, 60, (m, 2))]).astype(np.float32)
    return np.ascontiguousarray(segments), np.ascontiguousarray(rects)


def assert_same_rows(got: pd.DataFrame, want: np.ndarray, what):
    got = got.reset_index(drop=True)
    assert list(got.columns) == list(want.dtype.names), what
    assert len(got) == len(want), f"{what}: {len(got)} rows, expected {len(want)}"
    rows = got.to_records(index=False).astype(want.dtype)
    if rows.tobytes() != want.tobytes():
        i = int(np.flatnonzero(rows.view(np.void) != want.view(np.void))[0])
        pytest.fail(f"{what}: first difference at row {i}: {rows[i]} vs {want[i]}")


def test_a_cluster_job_over_parquet_equals_the_single_process_call(client, tmp_path):
    segments, rects = scene(5, 40_000, 300)
    ddf = dataset(tmp_path / "segments", segments, files=7)
    assert ddf.npartitions == 7
    engine = rectcast.Engine("cpu")
    first = rectcast.dask.first_hit(ddf, rects, backend="cpu").compute()
    assert_same_rows(first, engine.first_hit(segments, rects), "first_hit")
    hits = rectcast.dask.hits(ddf, rects, backend="cpu").compute()
    assert len(hits) > 1000
    assert_same_rows(hits, engine.hits(segments, rects), "hits")
    counts = rectcast.dask.counts(ddf, rects, backend="cpu")
    assert counts.tobytes() == engine.counts(segments, rects).tobytes()
    # The work ran in the workers' processes, which loaded the library to do it.
    loaded = client.run(lambda: "rectcast._rectcast" in sys.modules)
    assert len(loaded) == 2 and any(loaded.values()), loaded


def test_a_cluster_job_over_polygons_and_circles_equals_the_single_process_call(client, tmp_path):
    segments, rects = scene(6, 20_000, 200)
    ddf = dataset(tmp_path / "segments", segments, files=5)
    engine = rectcast.Engine("cpu")
    # A triangle in each rect, and the rects' inscribed circles.
    rings = [[[r[0], r[1]], [r[2], r[1]], [r[0], r[3]]] for r in rects.tolist()]
    circles = np.column_stack([
        (rects[:, 0] + rects[:, 2]) / 2, (rects[:, 1] + rects[:, 3]) / 2,
        np.minimum(rects[:, 2] - rects[:, 0], rects[:, 3] - rects[:, 1]) / 2,
    ]).astype(np.float32)
    # Each kind alone, then all three at once: one scene, the rows of the single-process call.
    every = {"rects": rects, "polygons": rings, "circles": circles}
    for name, given in (("polygons", {"polygons": rings}), ("circles", {"circles": circles}), ("every kind", every)):
        first = rectcast.dask.first_hit(ddf, backend="cpu", **given).compute()
        assert_same_rows(first, engine.first_hit(segments, **given), f"first_hit {name}")
        hits = rectcast.dask.hits(ddf, backend="cpu", **given).compute()
        assert len(hits) > 500, name
        assert_same_rows(hits, engine.hits(segments, **given), f"hits {name}")
        counts = rectcast.dask.counts(ddf, backend="cpu", **given)
        assert counts.tobytes() == engine.counts(segments, **given).tobytes(), name
    assert set(hits["target_kind"]) == {1, 2, 4}


def geo_scene(seed, roads, parcels):
    """Roads (line strings and multi line strings of 2-5 vertices a part, steps of 0 among them
    so that vertices repeat, labelled "r{i}", with a name) and parcels (squares, every third with a square hole; labelled 100 + i) on
    integer points, in one CRS: corners, edges run along, and segments inside holes."""
    shapely = pytest.importorskip("shapely")
    gpd = pytest.importorskip("geopandas")
    rng = np.random.default_rng(seed)

    def walk():
        steps = rng.integers(-2, 3, (rng.integers(1, 5), 2))
        return np.cumsum(np.vstack([rng.integers(0, 200, (1, 2)), steps]), axis=0).astype(float)

    lines = []
    for _ in range(roads):
        if rng.integers(4) == 0:
            lines.append(shapely.MultiLineString([walk(), walk()]))
        else:
            lines.append(shapely.LineString(walk()))
    shapes = []
    for i in range(parcels):
        x, y = rng.integers(0, 200, 2)
        size = int(rng.integers(3, 12))
        shell = shapely.box(x, y, x + size, y + size)
        if i % 3 == 0 and size >= 5:
            shell = shapely.Polygon(shell.exterior, [shapely.box(x + 1, y + 1, x + size - 2, y + size - 2).exterior])
        shapes.append(shell)
    road_frame = gpd.GeoDataFrame(
        {"name": [f"road {i}" for i in range(roads)]},
        geometry=lines, index=[f"r{i}" for i in range(roads)], crs="EPSG:3857",
    )
    parcel_frame = gpd.GeoDataFrame(geometry=shapes, index=np.arange(100, 100 + parcels), crs="EPSG:3857")
    return road_frame, parcel_frame


def as_text(frame):
    """Strings as objects: Dask holds them in its own dtype (pyarrow's), the same text."""
    return frame.astype({c: object for c in frame.columns if pd.api.types.is_string_dtype(frame[c].dtype)})


def test_a_cluster_job_over_a_geodataframe_of_roads_equals_the_single_process_call(client, tmp_path):
    dask_geopandas = pytest.importorskip("dask_geopandas")
    roads, parcels = geo_scene(7, 3000, 400)
    droads = dask_geopandas.from_geopandas(roads, npartitions=4, sort=False)
    # And the same roads as real GeoParquet files, read back lazily.
    folder = tmp_path / "roads"
    folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(roads)), 3)):
        roads.iloc[part].to_parquet(folder / f"part-{i}.parquet")
    from_files = dask_geopandas.read_parquet(str(folder))
    assert from_files.npartitions == 3
    engine = rectcast.Engine("cpu")
    for source in (droads, from_files):
        assert list(source.compute().index) == list(roads.index)
        for query in ("first_hit", "hits"):
            run = getattr(rectcast.dask, query)
            want = getattr(engine, query)(roads, polygons=parcels, to="pandas", ids="name")
            if query == "hits":
                assert len(want) > 300 and want["polygon_index"].nunique() > 50
            got = run(source, polygons=parcels, backend="cpu", to="pandas", ids="name").compute()
            pd.testing.assert_frame_equal(as_text(got.reset_index(drop=True)), as_text(want), obj=query)
            # The numpy rows as a frame, the line and polygon labels beside them.
            lazy = run(source, polygons=parcels, backend="cpu")
            frame = lazy.compute().reset_index(drop=True)
            # Every partition has the dtypes the lazy frame promised (nullable labels, with
            # or without a miss in it).
            assert lazy.dtypes.to_dict() == frame.dtypes.to_dict(), query
            rows = getattr(engine, query)(roads, polygons=parcels)
            assert_same_rows(frame[list(rows.dtype.names)], rows, f"{query} frame")
            for column in ("line", "line_segment"):
                assert (frame[column].to_numpy() == want[column].to_numpy()).all(), column
            labels = frame["polygon_index"].where(frame["polygon"] >= 0)
            assert labels.astype("Int64").equals(want["polygon_index"].astype("Int64")), query
            # A dask-geopandas GeoDataFrame, each row's geometry the part of its road hit.
            geo = run(source, polygons=parcels, backend="cpu", to="geopandas")
            assert isinstance(geo, dask_geopandas.GeoDataFrame), type(geo)
            geo = geo.compute().reset_index(drop=True)
            want_geo = getattr(engine, query)(roads, polygons=parcels, to="geopandas")
            assert geo.crs == roads.crs
            assert (geo.geometry.isna() == want_geo.geometry.isna()).all(), query
            same = geo.geometry.isna() | geo.geometry.geom_equals_exact(want_geo.geometry, 0)
            assert same.all(), query
            pd.testing.assert_frame_equal(
                as_text(geo.drop(columns="geometry")), as_text(want_geo.drop(columns="geometry"))
            )
        counts = rectcast.dask.counts(source, polygons=parcels, backend="cpu")
        assert counts.tobytes() == engine.counts(roads, polygons=parcels).tobytes()


def test_a_cluster_job_far_from_the_origin_shifts_every_partition_alike(client, far_scene):
    """Web mercator's magnitudes: every partition takes the origin the targets give, so the
    rows are the single-process call's, and GEOS's pairs, with geometry in the user's frame."""
    dask_geopandas = pytest.importorskip("dask_geopandas")
    shapely = pytest.importorskip("shapely")
    gpd = pytest.importorskip("geopandas")
    roads, parcels = far_scene(12)
    roads = gpd.GeoDataFrame({"name": [f"road {i}" for i in range(len(roads))]}, geometry=roads)
    tree = shapely.STRtree(parcels.array)
    want_pairs = set(zip(*(a.tolist() for a in tree.query(roads.geometry.array, predicate="intersects"))))
    droads = dask_geopandas.from_geopandas(roads, npartitions=3, sort=False)
    want = rectcast.Engine("cpu").hits(roads, polygons=parcels, to="geopandas", ids="name")
    assert want.attrs["origin"] != (0.0, 0.0)
    got = rectcast.dask.hits(droads, polygons=parcels, backend="cpu", to="geopandas", ids="name").compute()
    got = got.reset_index(drop=True)
    assert set(zip(got["line"].tolist(), got["polygon"].tolist())) == want_pairs
    pd.testing.assert_frame_equal(as_text(got.drop(columns="geometry")), as_text(want.drop(columns="geometry")))
    assert got.geometry.geom_equals_exact(want.geometry, 0).all()
    counts = rectcast.dask.counts(droads, polygons=parcels, backend="cpu")
    assert counts.tobytes() == rectcast.Engine("cpu").counts(roads, polygons=parcels).tobytes()


def test_a_worker_killed_mid_job_loses_and_repeats_nothing(client, tmp_path):
    # Long segments across the field: each partition takes a while, so the job is still running
    # when one of the two workers dies; Dask reruns its tasks on the other.
    rng = np.random.default_rng(9)
    segments = rng.uniform(0, 1000, (160_000, 4)).astype(np.float32)
    _, rects = scene(9, 1, 2000)
    ddf = dataset(tmp_path / "long", segments, files=16)
    pids = client.run(os.getpid)
    job = client.compute(rectcast.dask.hits(ddf, rects, backend="cpu"))
    deadline = time.monotonic() + 60
    while not any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    assert not job.done(), "the job ended before a worker could be killed: make it longer"
    victim = next(w for w, tasks in client.processing().items() if tasks)
    os.kill(pids[victim], signal.SIGKILL)
    got = job.result(timeout=300)
    assert victim not in client.scheduler_info()["workers"], "the worker was not killed"
    assert_same_rows(got, rectcast.Engine("cpu").hits(segments, rects), "hits after a worker died")


def test_a_cluster_job_skipping_invalid_inputs_equals_the_single_process_call(client, tmp_path):
    segments, rects = scene(21, 4_000, 120)
    segments[[5, 1_500, 3_999]] = np.nan
    rects[7] = [50, 50, 10, 60]  # min_x above max_x
    ddf = dataset(tmp_path / "trajectories", segments, 3)
    engine = rectcast.Engine("cpu")
    for query in ("first_hit", "hits"):
        with pytest.warns(rectcast.SkippedWarning):
            want = getattr(engine, query)(segments, rects, skip_invalid=True)
        with pytest.warns(rectcast.SkippedWarning, match="rect 7: min_x is 50"):  # said at the call
            lazy = getattr(rectcast.dask, query)(ddf, rects, backend="cpu", skip_invalid=True)
        got = lazy.compute()
        assert_same_rows(got, want, query)
        assert not (set(want["segment"].tolist()) & {5, 1_500, 3_999}) and 7 not in set(want["rect"].tolist())
    with pytest.warns(rectcast.SkippedWarning):
        want = engine.counts(segments, rects, skip_invalid=True)
    with pytest.warns(rectcast.SkippedWarning):
        got = rectcast.dask.counts(ddf, rects, backend="cpu", skip_invalid=True)
    assert got.tobytes() == want.tobytes()
