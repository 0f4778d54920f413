"""Python programs that share an engine between threads, fork after making one, or write into
an input while a call reads it: each gives the single-thread bytes (or a clear error) within a
time limit, never a hang or a PanicException.

Each scenario runs in a child interpreter under a timeout, so a deadlock fails the test instead
of hanging the suite."""

import os
import subprocess
import sys
import textwrap

import pytest

#: Seconds a scenario may take; each one's work is well under a second when nothing hangs.
LIMIT = 120

PRELUDE = textwrap.dedent(
    """
    import os, sys, threading, numpy as np, rectcast
    rng = np.random.default_rng(0)
    S = rng.uniform(-100, 100, (200_000, 4)).astype(np.float32)
    c = rng.uniform(-100, 100, (2_000, 2)).astype(np.float32)
    R = np.hstack([c, c + 5])
    W = rng.uniform(-100, 100, (300, 4)).astype(np.float32)
    single = rectcast.Engine("cpu").first_hit(S, R).tobytes()
    """
)


def run_scenario(body, env=None):
    """Runs PRELUDE + body in a fresh interpreter; returns its stdout. Fails on a hang (naming
    the scenario's last output) or on a non-zero exit."""
    code = PRELUDE + textwrap.dedent(body)
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=LIMIT,
            env={**os.environ, **(env or {})},
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"hung for {LIMIT} s; its output so far: {e.stdout!r} {e.stderr!r}")
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("backend", ["cpu", "auto"])
def test_threads_sharing_one_engine_get_the_single_thread_bytes(backend):
    out = run_scenario(
        f"""
        engine = rectcast.Engine({backend!r})
        results, errors = [], []
        def work():
            try:
                for _ in range(3):
                    results.append(engine.first_hit(S, R).tobytes())
                    results.append(engine.counts(S, R).tobytes() and single)
                    engine.chosen  # the getter must not wait on the engine with the GIL held
                    engine.hits(S[:20_000], walls=W)
            except BaseException as e:
                errors.append(repr(e))
        threads = [threading.Thread(target=work) for _ in range(4)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        assert not errors, errors
        bad = [i for i, r in enumerate(results) if r != single]
        assert not bad, f"call {{bad[0]}} differs from the single-thread bytes"
        print(len(results))
        """
    )
    assert out.split() == ["24"]


def test_module_functions_from_a_thread_pool_share_one_default_engine():
    out = run_scenario(
        """
        from concurrent.futures import ThreadPoolExecutor
        made = []
        original = rectcast.Engine.__init__
        def counting(self, *a, **k):
            made.append(1)
            original(self, *a, **k)
        rectcast.Engine.__init__ = counting
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(lambda _: rectcast.first_hit(S, R).tobytes(), range(16)))
        assert all(r == single for r in results), [i for i, r in enumerate(results) if r != single]
        print(len(made))
        """
    )
    assert out.split() == ["1"], "the default engine was made more than once"


def test_dask_threaded_scheduler_with_module_functions_gives_the_single_thread_rows():
    pytest.importorskip("dask.dataframe")
    run_scenario(
        """
        import dask, dask.dataframe as dd, pandas as pd
        frame = pd.DataFrame(S, columns=list(rectcast.SEGMENT_COLUMNS))
        parts = dd.from_pandas(frame, npartitions=8)
        def first(part):
            rows = rectcast.first_hit(part.to_numpy(np.float32), R)
            return pd.DataFrame({"rect": rows["rect"]}, index=part.index)
        got = parts.map_partitions(first, meta={"rect": "i8"}).compute(scheduler="threads")
        want = np.frombuffer(single, dtype=rectcast.Engine("cpu").first_hit(S[:1], R).dtype)
        assert (got["rect"].to_numpy() == want["rect"]).all()
        """
    )


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
@pytest.mark.parametrize("made", ["cpu", "cpu-threads-2", "gpu-used"])
def test_a_forked_child_runs_queries_after_the_parent_made_an_engine(made):
    """The parent makes (and uses) an engine, then forks; the child's calls must finish with
    the single-thread bytes. A GPU engine made before the fork is refused in the child with an
    error that says so, and an "auto" engine runs the call on the CPU there."""
    out = run_scenario(
        f"""
        made = {made!r}
        if made == "gpu-used":
            try:
                parent = rectcast.Engine("gpu")
            except RuntimeError:
                print("no-gpu"); sys.exit(0)
        else:
            parent = rectcast.Engine("cpu", threads=2 if made.endswith("2") else 0)
        parent.first_hit(S, R)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            answer = b"same" if rectcast.Engine("cpu").first_hit(S, R).tobytes() == single else b"diff"
            if made == "gpu-used":
                try:
                    parent.first_hit(S, R)
                    answer += b" no-error"
                except RuntimeError as e:
                    answer += b" refused" if "fork" in str(e) else b" other-error"
            else:
                answer += b" same" if parent.first_hit(S, R).tobytes() == single else b" diff"
            os.write(write, answer)
            os._exit(0)
        os.close(write)
        _, status = os.waitpid(pid, 0)
        print(os.read(read, 100).decode(), status)
        """
    )
    if out.split() == ["no-gpu"]:
        if os.environ.get("RECTCAST_REQUIRE_GPU") == "1":
            pytest.fail("no GPU adapter opened, and RECTCAST_REQUIRE_GPU=1")
        pytest.skip("no GPU adapter")
    expected = "same refused 0" if made == "gpu-used" else "same same 0"
    assert out.strip() == expected


def test_multiprocessing_pool_with_fork_finishes():
    out = run_scenario(
        """
        import multiprocessing as mp
        rectcast.Engine("cpu").first_hit(S, R)
        def child(i):
            return rectcast.first_hit(S[i * 50_000:(i + 1) * 50_000], R).tobytes()
        with mp.get_context("fork").Pool(2) as pool:
            parts = pool.map(child, range(4))
        want = [rectcast.Engine("cpu").first_hit(S[i * 50_000:(i + 1) * 50_000], R).tobytes() for i in range(4)]
        print(parts == want)
        """
    )
    assert out.split() == ["True"]


def test_writing_into_the_segments_during_a_call_never_panics():
    """Another thread writes infinities and NaN into the segments while first_hit, hits and
    counts read them: the answer is unspecified, but a call returns rows or raises an
    ordinary Exception (ValueError, RuntimeError), never a PanicException."""
    out = run_scenario(
        """
        import time
        fresh = rng.uniform(-100, 100, (1_000_000, 4)).astype(np.float32)
        big = fresh.copy()
        rects = R[:300].copy()
        engine = rectcast.Engine("cpu")
        def scribble(delay):
            # After validation has read the array (a few ms), while the kernel runs.
            time.sleep(delay)
            cells = np.random.default_rng(1)
            for _ in range(200):
                i = cells.integers(0, big.size, 64)
                big.flat[i] = cells.choice([np.inf, -np.inf, np.nan, 3e38], 64)
                # A segment whose box is the whole plane: the box cull's worst case.
                big[cells.integers(0, len(big), 8)] = [-np.inf, -np.inf, np.inf, np.inf]
        outcomes = []
        for query in ["first_hit", "hits", "counts"]:
            for delay in [0.005, 0.02]:
                big[:] = fresh
                writer = threading.Thread(target=scribble, args=(delay,))
                writer.start()
                try:
                    getattr(engine, query)(big, rects)
                    outcomes.append("rows")
                except Exception as e:
                    outcomes.append(type(e).__name__)
                writer.join()
        print(" ".join(outcomes))
        """
    )
    assert all(o in ("rows", "ValueError", "RuntimeError") for o in out.split()), out


@pytest.mark.parametrize("query", ["counts", "first_hit"])
def test_ctrl_c_during_a_long_call_raises_keyboard_interrupt_at_the_next_chunk(query):
    """SIGINT during a call of a few seconds: KeyboardInterrupt comes while the call runs (the
    engine stops at its next chunk), not after it returns, and the engine still answers."""
    out = run_scenario(
        f"""
        import signal, time
        # Python's own Ctrl-C handler, even where this test runs in a background job, whose
        # SIGINT the shell ignores (and Python then leaves ignored).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        big = rng.uniform(-100, 100, (1_000_000, 4)).astype(np.float32)
        engine = rectcast.Engine("cpu")
        start = time.perf_counter()
        want = getattr(engine, {query!r})(big, R)
        whole = time.perf_counter() - start
        def interrupt():
            time.sleep(whole / 10)
            os.kill(os.getpid(), signal.SIGINT)
        threading.Thread(target=interrupt).start()
        start = time.perf_counter()
        try:
            getattr(engine, {query!r})(big, R)
            print("finished", whole)
        except KeyboardInterrupt:
            print("interrupted", time.perf_counter() - start, whole)
        again = getattr(engine, {query!r})(big, R)
        print(again.tobytes() == want.tobytes())
        """
    )
    lines = out.split("\n")
    words = lines[0].split()
    assert words[0] == "interrupted", f"the call ran to its end ({words[1]} s) despite SIGINT"
    stopped, whole = float(words[1]), float(words[2])
    assert stopped < whole / 2, f"interrupted after {stopped:.2f} s of a {whole:.2f} s call"
    assert lines[1] == "True", "the engine's next call differs"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_child_forked_while_another_thread_is_mid_call_can_use_the_engine():
    """Thread A loops over long calls on the engine; the main thread forks while one is in
    flight. The child has no thread A, so the engine's lock, held by A at the fork, would never
    be released there: the child's own call must still finish, with the right bytes."""
    out = run_scenario(
        """
        engine = rectcast.Engine("cpu")
        big = np.tile(S, (10, 1))
        in_flight, stop = threading.Event(), threading.Event()
        def loop():
            while not stop.is_set():
                in_flight.set()
                engine.first_hit(big, R)
        a = threading.Thread(target=loop)
        a.start()
        in_flight.wait()
        small = S[:1000]
        want = rectcast.Engine("cpu").first_hit(small, R).tobytes()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            got = engine.first_hit(small, R).tobytes()
            os.write(write, b"same" if got == want else b"diff")
            os._exit(0)
        os.close(write)
        _, status = os.waitpid(pid, 0)
        stop.set()
        a.join()
        print(os.read(read, 100).decode(), status)
        """
    )
    assert out.strip() == "same 0"
