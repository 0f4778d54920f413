"""What users pass, as they have it: float64 (pandas', polars' and Arrow's default), integers,
Fortran order, pandas DataFrames. Converted exactly (the same bytes as the float32 call), or
refused naming the value float32 cannot hold; ``rounding="nearest"`` rounds and says how many.
And the arguments that used to give unhelpful errors."""

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import rectcast


@pytest.fixture(scope="module")
def engine():
    return rectcast.Engine("cpu")


@pytest.fixture(scope="module")
def scene():
    """Coordinates on a grid of quarters: every one exact in float32, float64 and int-free."""
    rng = np.random.default_rng(3)
    segments = (rng.integers(-400, 400, (2000, 4)) / 4).astype(np.float32)
    corners = (rng.integers(-400, 400, (60, 2)) / 4).astype(np.float32)
    rects = np.hstack([corners, corners + 7.5]).astype(np.float32)
    return segments, rects


def same(got, want, what):
    assert got.dtype == want.dtype, what
    if got.tobytes() != want.tobytes():
        i = int(np.flatnonzero(got.view(np.void) != want.view(np.void))[0])
        pytest.fail(f"{what}: first difference at row {i}: {got[i]} vs {want[i]}")


def test_float64_fortran_order_and_pandas_frames_give_the_float32_bytes(engine, scene):
    segments, rects = scene
    want = engine.first_hit(segments, rects)
    frame = pd.DataFrame(segments.astype(np.float64), columns=list(rectcast.SEGMENT_COLUMNS))
    frame.insert(0, "id", np.arange(len(frame)))  # other columns are ignored
    for what, data in [
        ("float64", segments.astype(np.float64)),
        ("Fortran order", np.asfortranarray(segments)),
        ("pandas float64 frame", frame),
        ("frame.to_numpy() (Fortran, float64)", frame[list(rectcast.SEGMENT_COLUMNS)].to_numpy()),
        ("Arrow float64 table", pa.table(frame)),
    ]:
        same(engine.first_hit(data, rects), want, what)
    same(engine.first_hit(segments, rects.astype(np.float64)), want, "float64 rects")


def test_integers_convert_when_float32_holds_them(engine):
    rects = np.array([[0, 0, 10, 10]], np.int64)
    got = engine.first_hit(np.array([[-5, 2, 15, 8]], np.int32), rects)
    assert got["rect"][0] == 0 and got["t_enter"][0] == np.float32(0.25)
    with pytest.raises(ValueError, match=r"segment 0: x1 is 16777217 \(int64\)"):
        engine.first_hit(np.array([[0, 0, 2**24 + 1, 0]], np.int64), rects)


def test_a_float64_value_float32_cannot_hold_is_named_or_rounded_with_a_count(engine):
    segments = np.array([[0.5, 0.5, 9.5, 9.5], [0.1, 0.5, 9.5, 0.2]], np.float64)
    rects = np.array([[0, 0, 10, 10]], np.float32)
    with pytest.raises(ValueError, match=r"segment 1: x0 is 0\.1 \(float64\).*2 such values.*rounding=\"nearest\""):
        engine.first_hit(segments, rects)
    with pytest.warns(rectcast.RoundingWarning, match="segments: 2 values rounded to float32"):
        got = engine.first_hit(segments, rects, rounding="nearest")
    same(got, engine.first_hit(segments.astype(np.float32), rects), "rounded")
    frame = pd.DataFrame(segments, columns=list(rectcast.SEGMENT_COLUMNS))
    with pytest.raises(ValueError, match=r"segment 1: x0 is 0\.1"):
        engine.first_hit(frame, rects)
    with pytest.raises(ValueError, match='rounding: expected "exact" or "nearest"'):
        engine.first_hit(segments, rects, rounding="up")


def test_float32_exact_inputs_warn_nothing_and_copy_nothing(engine, scene):
    segments, rects = scene
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        engine.first_hit(segments.astype(np.float64), rects)
    assert rectcast._records(segments, rectcast.SEGMENT_COLUMNS, "segments") is segments


def test_complex_strings_and_booleans_are_refused_not_truncated(engine):
    rects = np.array([[0, 0, 10, 10]], np.float32)
    with pytest.raises(TypeError, match="complex"):
        engine.first_hit(np.array([[0, 0, 1, 1j]], np.complex64), rects)
    with pytest.raises(TypeError, match="complex"):
        engine.first_hit(np.array([[0, 0, 1, 1j]], np.complex64), rects, copy=True)
    with pytest.raises(TypeError, match="expected real numbers, found bool"):
        engine.first_hit(np.ones((1, 4), bool), rects)
    with pytest.raises(TypeError, match="column x0 is (large_)?str(ing)?, expected numbers"):
        engine.first_hit(pd.DataFrame({"x0": ["a"], "y0": [0.0], "x1": [1.0], "y1": [1.0]}), rects)


def test_clip_to_a_rect_of_the_wrong_length_and_negative_threads_say_what(engine):
    segments = np.zeros((1, 4), np.float32)
    with pytest.raises(ValueError, match=r"rect: expected 4 values \(min_x, min_y, max_x, max_y\), found shape \(3,\)"):
        engine.clip(segments, (0, 0, 1))
    got = engine.clip(np.array([[-1, 0.5, 2, 0.5]]), (0, 0, 1, 1))  # float64 and a tuple
    assert (got["x0"][0], got["x1"][0]) == (0, 1)
    with pytest.raises(ValueError, match="threads: expected a whole number >= 0"):
        rectcast.Engine("cpu", threads=-1)


def test_dask_float64_columns_work_and_bad_columns_fail_when_the_graph_is_made():
    dd = pytest.importorskip("dask.dataframe")
    import rectcast.dask

    rng = np.random.default_rng(5)
    segments = (rng.integers(-400, 400, (3000, 4)) / 4).astype(np.float64)
    rects = np.array([[0, 0, 50, 50], [-20, -20, -10, -10]], np.float64)
    frame = pd.DataFrame(segments, columns=list(rectcast.SEGMENT_COLUMNS))
    parts = dd.from_pandas(frame, npartitions=3)
    got = rectcast.dask.first_hit(parts, rects, backend="cpu").compute(scheduler="sync")
    want = rectcast.Engine("cpu").first_hit(segments.astype(np.float32), rects.astype(np.float32))
    assert (got["rect"].to_numpy() == want["rect"]).all()
    bad = dd.from_pandas(frame.assign(x0=frame["x0"].astype(str)), npartitions=3)
    with pytest.raises(TypeError, match="column x0 is (object|string|str)"):
        rectcast.dask.first_hit(bad, rects)  # no .compute(): refused before the graph runs
    inexact = dd.from_pandas(frame + 0.1, npartitions=3)
    with pytest.raises(ValueError, match="float32 cannot hold exactly"):
        rectcast.dask.first_hit(inexact, rects, backend="cpu").compute(scheduler="sync")


def test_an_auto_engine_prints_no_driver_noise_without_xdg_runtime_dir():
    """Mesa's "XDG_RUNTIME_DIR is invalid or not set", 4 times per engine, is gone."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    done = subprocess.run(
        [sys.executable, "-c", "import rectcast; rectcast.Engine('auto'); rectcast.Engine('auto').chosen"],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", f"noise on stderr: {done.stderr!r}"


def test_pandas_out_has_categorical_kinds_and_sides_nullable_indices_and_the_users_ids(engine, scene):
    segments, rects = scene
    frame = pd.DataFrame(segments.astype(np.float64), columns=list(rectcast.SEGMENT_COLUMNS))
    frame.insert(0, "track", [f"t{i}" for i in range(len(frame))])
    frame.insert(1, "frame_no", np.arange(len(frame)) * 10)
    got = engine.first_hit(frame, rects, to="pandas", ids=["track", "frame_no"])
    want = engine.first_hit(segments, rects)
    assert list(got.columns[:3]) == ["track", "frame_no", "segment"]
    assert (got["track"] == np.array([f"t{i}" for i in want["segment"]])).all()
    assert (got["frame_no"].to_numpy() == want["segment"] * 10).all()
    assert got["kind"].dtype == "category" and list(got["kind"].cat.categories) == list(rectcast.KIND_NAMES)
    assert (got["kind"].cat.codes.to_numpy() == want["kind"]).all()
    miss = want["rect"] < 0
    assert miss.any() and (~miss).any()
    assert got["rect"].isna().to_numpy().tolist() == miss.tolist()
    assert (got["rect"][~miss].to_numpy(dtype=np.int64) == want["rect"][~miss]).all()
    no_entry = want["entry"] == 0
    assert got["entry"].isna().to_numpy().tolist() == no_entry.tolist()
    names = np.array(rectcast.SIDE_NAMES, dtype=object)[want["entry"][~no_entry]]
    assert (got["entry"][~no_entry].astype(str).to_numpy() == names).all()
    np.testing.assert_array_equal(got["t_enter"].to_numpy(), want["t_enter"])
    hits = engine.hits(segments, rects, to="arrow", ids=np.arange(len(segments)) + 1000)
    assert hits.column("id").to_pylist() == (hits.column("segment").to_numpy() + 1000).tolist()
    walls = engine.hits(segments, walls=segments[:50], to="pandas")
    assert list(walls["contact"].cat.categories) == list(rectcast.CONTACT_NAMES)
    # A first hit's target is <NA> on a miss for shapes too, as for rects.
    first_wall = engine.first_hit(segments, walls=segments[:50])
    as_pandas = engine.first_hit(segments, walls=segments[:50], to="pandas")
    wall_miss = first_wall["wall"] < 0
    assert wall_miss.any() and as_pandas["wall"].isna().to_numpy().tolist() == wall_miss.tolist()
    # And null in Arrow, as the CLI's Parquet has it, for walls and circles as for rects.
    pytest.importorskip("pyarrow")
    as_arrow = engine.first_hit(segments, walls=segments[:50], to="arrow")
    assert as_arrow.column("wall").null_count == wall_miss.sum()
    assert as_arrow.column("wall").to_pylist() == [None if m else int(w) for w, m in zip(first_wall["wall"], wall_miss)]
    circles = np.column_stack([segments[:40, :2], np.full(40, 3, np.float32)])
    first_circle = engine.first_hit(segments, circles=circles)
    circle_miss = first_circle["circle"] < 0
    assert circle_miss.any() and (~circle_miss).any()
    as_arrow = engine.first_hit(segments, circles=circles, to="arrow")
    assert as_arrow.column("circle").is_null().to_pylist() == circle_miss.tolist()


def test_ids_and_to_are_checked_before_any_work(engine, scene):
    segments, rects = scene
    with pytest.raises(ValueError, match='to: expected "numpy", "arrow", "pandas" or "geopandas"'):
        engine.first_hit(segments, rects, to="polars")
    with pytest.raises(TypeError, match='ids: .*to="pandas"'):
        engine.first_hit(segments, rects, ids=np.arange(len(segments)))
    with pytest.raises(ValueError, match=r"ids: expected one id per segment \(2000\)"):
        engine.first_hit(segments, rects, to="pandas", ids=[1, 2, 3])
    frame = pd.DataFrame(segments, columns=list(rectcast.SEGMENT_COLUMNS))
    with pytest.raises(ValueError, match="ids: no column track"):
        engine.first_hit(frame, rects, to="pandas", ids="track")


def test_module_functions_show_the_engines_signature_and_docstring():
    import inspect

    for name in ["pairs", "first_hit", "first_hit_rects", "hits", "counts", "clip", "overlaps",
                 "wall_pairs", "circle_pairs", "polygon_pairs"]:
        function, method = getattr(rectcast, name), getattr(rectcast.Engine, name)
        assert method.__doc__ in function.__doc__, name
        assert "default engine" in function.__doc__, name
        assert list(inspect.signature(function).parameters) == list(inspect.signature(method).parameters)[1:], name


def test_the_stubs_name_every_parameter_of_the_functions_and_methods():
    """The typed stubs (__init__.pyi) are held to the code: every public function and Engine
    method has a stub (each overload) with the same parameters."""
    import ast
    import inspect
    from pathlib import Path

    stub = ast.parse((Path(rectcast.__file__).parent / "__init__.pyi").read_text())

    def stubbed(body):
        found = {}
        for node in body:
            if isinstance(node, ast.FunctionDef):
                a = node.args
                names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
                found.setdefault(node.name, []).append(names + ([a.kwarg.arg] if a.kwarg else []))
        return found

    functions = stubbed(stub.body)
    engine_class = next(n for n in stub.body if isinstance(n, ast.ClassDef) and n.name == "Engine")
    methods = stubbed(engine_class.body)
    for name in rectcast.__all__:
        value = getattr(rectcast, name)
        if inspect.isfunction(value):
            want = list(inspect.signature(value).parameters)
            assert name in functions, f"no stub for {name}"
            for params in functions[name]:
                assert params == want, f"{name}: stub {params} vs {want}"
    for name, method in vars(rectcast.Engine).items():
        if inspect.isfunction(method) and not name.startswith("_"):
            want = list(inspect.signature(method).parameters)
            assert name in methods, f"no stub for Engine.{name}"
            for params in methods[name]:
                assert params == want, f"Engine.{name}: stub {params} vs {want}"


def test_every_registered_shape_is_a_keyword_with_its_rows_fields_and_category_names(engine):
    """A shape registered in the Rust module (``rectcast.SHAPES``) is a keyword of every query,
    its rows carry its name and its category, and pandas and Arrow name its category's codes."""
    segments = np.array([[0, 0, 1, 0]], np.float32)
    assert rectcast.SHAPES == ("walls", "circles")
    for keyword in rectcast.SHAPES:
        shape = rectcast._SHAPES[keyword]
        none = np.zeros((0, len(shape["columns"])), np.float32)
        rows = engine.pairs(segments, **{keyword: none})
        assert rows.dtype.names == ("segment", shape["name"], "hit", shape["category"], "t_enter", "t_exit")
        first = engine.first_hit(segments, **{keyword: none}, to="pandas")
        assert list(first[shape["category"]].cat.categories) == list(shape["category_names"]), keyword
        assert first[shape["category"]].astype(str).tolist() == ["miss"], keyword
        counts = engine.counts(segments, **{keyword: none}, to="arrow")
        assert counts.schema.names == [shape["name"], "hits"], keyword
    assert rectcast._SHAPES["circles"]["category_names"] == list(rectcast.CIRCLE_KIND_NAMES)


def test_a_keyword_no_shape_has_is_refused_naming_the_targets(engine):
    segments = np.array([[0, 0, 1, 0]], np.float32)
    with pytest.raises(TypeError, match=r"pairs: unexpected keyword 'squares'.*walls, circles"):
        engine.pairs(segments, squares=segments)
    # An option a query does not have is not called a target: the query's options are named.
    with pytest.raises(TypeError, match=r"first_hit: unexpected keyword 'verbose': it takes to, copy, rounding, ids, origin, skip_invalid, progress"):
        engine.first_hit(segments, segments, verbose=True)
    with pytest.raises(TypeError, match=r"counts: give one or more of rects, walls, circles, polygons; found none"):
        engine.counts(segments)


def test_an_auto_engine_opens_no_gpu_for_a_small_call_and_refuses_unreadable_costs():
    """The model places one segment against one rect on the CPU, and says why; a
    RECTCAST_AUTO_COSTS it cannot read is a ValueError naming the item."""
    import os
    import subprocess
    import sys

    script = (
        "import numpy as np, rectcast\n"
        "e = rectcast.Engine('auto')\n"
        "e.first_hit(np.array([[0, 0, 1, 1]], np.float32), np.array([[0.5, 0.5, 2, 2]], np.float32))\n"
        "print(e.chosen)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RECTCAST_AUTO_COSTS"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("cpu: ") and "auto: first_hits, " in done.stdout, done.stdout
    env["RECTCAST_AUTO_COSTS"] = "walls=3"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode != 0
    assert "ValueError: auto backend: RECTCAST_AUTO_COSTS: item 1 `walls=3`: a family's costs are CPU_NS/GPU_NS" in done.stderr, done.stderr


def test_a_masked_value_is_refused_naming_its_row_and_an_unmasked_array_is_read(engine):
    segments = np.ma.masked_array(
        np.array([[0, 0, 10, 10], [0, 5, 10, 5]], np.float32),
        mask=[[False] * 4, [False, True, False, False]],
    )
    rects = np.array([[2, 2, 4, 4]], np.float32)
    with pytest.raises(ValueError, match="segment 1: a masked value"):
        engine.first_hit(segments, rects)
    unmasked = np.ma.masked_array(np.ma.getdata(segments), mask=False)
    got = engine.first_hit(unmasked, rects)
    assert got.tobytes() == engine.first_hit(np.ma.getdata(segments), rects).tobytes()


def test_a_pandas_frame_goes_in_without_pyarrow_and_its_nan_is_a_nan(engine, scene, monkeypatch):
    segments, rects = scene
    frame = pd.DataFrame(segments.astype(np.float64), columns=list(rectcast.SEGMENT_COLUMNS))
    want = engine.first_hit(segments, rects)
    monkeypatch.setitem(__import__("sys").modules, "pyarrow", None)  # import pyarrow fails
    assert engine.first_hit(frame, rects).tobytes() == want.tobytes()
    frame.loc[1, "x0"] = np.nan
    with pytest.raises(ValueError, match="segment 1: x0 is NaN"):
        engine.first_hit(frame, rects)
    # A nullable column's missing value is null, as Arrow's is.
    nullable = frame.astype({"y1": "Float64"})
    nullable.loc[1, "x0"] = 0.0
    nullable.loc[2, "y1"] = pd.NA
    with pytest.raises(ValueError, match="segment 2: y1 is null"):
        engine.first_hit(nullable, rects)

    class Stream:
        def __arrow_c_stream__(self, requested_schema=None):
            raise AssertionError("not read without pyarrow")

    with pytest.raises(ImportError, match="segments: Arrow data \\(Stream\\) is read with pyarrow: pip install pyarrow"):
        engine.first_hit(Stream(), rects)


def test_one_string_id_per_segment_is_an_id_not_a_column_name(engine):
    segments = np.array([[0, 5, 20, 5], [0, 50, 1, 50], [5, -5, 5, 15]], np.float32)
    rects = np.array([[0, 0, 10, 10]], np.float32)
    for given in (segments, pd.DataFrame(segments, columns=list(rectcast.SEGMENT_COLUMNS))):
        first = engine.first_hit(given, rects, to="pandas", ids=["u", "v", "w"])
        assert first["id"].tolist() == ["u", "v", "w"]
        assert first["rect"].isna().tolist() == [False, True, False]
    frame = pd.DataFrame(segments, columns=list(rectcast.SEGMENT_COLUMNS)).assign(u=1, v=2, w=3)
    assert list(engine.first_hit(frame, rects, to="pandas", ids=["u", "v", "w"]).columns[:3]) == ["u", "v", "w"]


def test_a_pandas_series_is_refused_as_segments_unless_it_holds_line_strings(engine):
    shapely = pytest.importorskip("shapely")
    rects = np.array([[0, 0, 10, 10]], np.float32)
    with pytest.raises(TypeError, match="segments: a pandas Series; expected a DataFrame with columns x0, y0, x1, y1"):
        engine.first_hit(pd.Series([0.0, 5.0, 20.0, 5.0]), rects)
    lines = pd.Series([shapely.LineString([(-5, 5), (5, 5)]), shapely.LineString([(20, 20), (30, 30)])], index=["a", "b"])
    first = engine.first_hit(lines, rects, to="pandas")
    assert first["line"].tolist() == ["a", "b"] and first["rect"].isna().tolist() == [False, True]


def test_geopandas_bounds_and_lists_of_rows_go_in_as_rects(engine, scene):
    segments, rects = scene
    want = engine.hits(segments, rects)
    bounds = pd.DataFrame(rects.astype(np.float64), columns=["minx", "miny", "maxx", "maxy"])
    assert engine.hits(segments, bounds).tobytes() == want.tobytes()
    assert engine.hits(segments.tolist(), rects.tolist()).tobytes() == want.tobytes()
    with pytest.raises(ValueError, match=r"rects: no column min_x: .* \(or minx,miny,maxx,maxy, as geopandas' .bounds names them\)"):
        engine.hits(segments, bounds.drop(columns="maxy"))
    with pytest.raises(ValueError, match=r"segments: expected shape \(N, 4\)"):
        engine.hits([[0, 0, 1]], rects)


def test_the_package_says_its_version():
    assert rectcast.__version__ == __import__("importlib.metadata").metadata.version("rectcast")


def test_each_querys_help_says_its_inputs_and_options():
    for name in ("pairs", "first_hit", "hits", "counts", "wall_pairs", "circle_pairs", "polygon_pairs", "clip"):
        doc = getattr(rectcast, name).__doc__
        for said in ("Inputs:", "``to``", "``ids``", "``rounding``", "``origin``", "geopandas"):
            assert said in doc, f"help(rectcast.{name}) does not say {said}"


def test_pandas_rows_name_every_index_in_one_signed_dtype_in_every_query(engine):
    segments = np.array([[0, 5, 20, 5], [0, 50, 1, 50]], np.float32)
    targets = {
        "rects": np.array([[0, 0, 10, 10]], np.float32),
        "walls": np.array([[5, 0, 5, 10]], np.float32),
        "circles": np.array([[5, 5, 2]], np.float32),
        "polygons": [np.array([[0, 0], [10, 0], [10, 10]], np.float32)],
    }
    for keyword, target in targets.items():
        for query in ("pairs", "first_hit", "hits", "counts"):
            frame = getattr(engine, query)(segments, **{keyword: target}, to="pandas")
            field = frame.columns[1] if query != "counts" else frame.columns[0]
            assert str(frame[field].dtype) == "Int64", (keyword, query, frame.dtypes.to_dict())
            for column in frame.columns:
                assert not str(frame[column].dtype).startswith("uint"), (keyword, query, column)
            if query != "counts":
                assert frame["segment"].dtype == np.int64
                assert (frame["segment"] - np.int64(1)).dtype == np.int64


def test_progress_is_said_batch_by_batch_and_the_rows_are_one_calls(engine, capsys):
    rng = np.random.default_rng(8)
    start = rng.uniform(0, 1000, (140_000, 2))
    segments = np.hstack([start, start + rng.normal(0, 20, (140_000, 2))]).astype(np.float32)
    corners = rng.uniform(0, 1000, (100, 2))
    rects = np.hstack([corners, corners + 30]).astype(np.float32)
    circles = np.hstack([corners, np.full((100, 1), 12)]).astype(np.float32)
    for query in ("pairs", "first_hit", "hits", "counts"):
        for target in ({"rects": rects}, {"circles": circles}):
            told = []
            # Three batches; pairs two (every pair is a row).
            segments_here = segments[:70_000] if query == "pairs" else segments
            want = getattr(engine, query)(segments_here, **target)
            got = getattr(engine, query)(segments_here, **target, progress=lambda done, total: told.append((done, total)))
            assert got.tobytes() == want.tobytes(), (query, target.keys())
            n = len(segments_here)
            assert told[-1] == (n, n) and len(told) == -(-n // 65_536), (query, told)
            assert [d for d, _ in told] == sorted(d for d, _ in told)
    # Without tqdm, a line on stderr.
    engine.counts(segments, rects, progress=True)
    assert "rectcast: 100% (140,000 of 140,000 segments)" in capsys.readouterr().err
    with pytest.raises(TypeError, match="progress: expected True, False, None or a callable"):
        engine.counts(segments, rects, progress="yes")
