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
    for name, shapes in (("polygons", rings), ("circles", circles)):
        first = rectcast.dask.first_hit(ddf, backend="cpu", **{name: shapes}).compute()
        assert_same_rows(first, engine.first_hit(segments, **{name: shapes}), f"first_hit {name}")
        hits = rectcast.dask.hits(ddf, backend="cpu", **{name: shapes}).compute()
        assert len(hits) > 500, name
        assert_same_rows(hits, engine.hits(segments, **{name: shapes}), f"hits {name}")
        counts = rectcast.dask.counts(ddf, backend="cpu", **{name: shapes})
        assert counts.tobytes() == engine.counts(segments, **{name: shapes}).tobytes(), name
    with pytest.raises(TypeError, match="give one of rects, walls, circles, polygons"):
        rectcast.dask.hits(ddf, rects, circles=circles)


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
