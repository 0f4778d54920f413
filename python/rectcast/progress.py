"""``progress=``: a long call said as it goes, as the CLI's ``--progress`` says a job. The
segments go to the engine in batches (at least 65,536 segments, at most about a hundred
batches), and after each one the progress is said: ``True`` draws a tqdm bar where tqdm is
installed, else a line on stderr redrawn in place; a callable is called with (segments done,
segments in all). The rows are those of one call: each batch's ``segment`` numbers are moved
on by the segments before it, and counts are summed. Without ``progress`` the call is one
engine call, as it always was.
"""

from __future__ import annotations

import sys

import numpy as np

#: The fewest segments a batch holds: below it, a batch's own set-up (the targets' grid) would
#: be a large share of its work.
SMALLEST_BATCH = 1 << 16


def rows(call, segments, query, progress):
    """``call(segments)``'s packed rows ((bytes, descr), as the Rust module gives them), in
    batches that ``progress`` is told of; one call where ``progress`` is ``None`` or
    ``False``."""
    if progress is None or progress is False:
        return call(segments)
    say = _sayer(progress, len(segments))
    size = max(SMALLEST_BATCH, -(-len(segments) // 100))
    parts, descr, done = [], None, 0
    try:
        for start in range(0, max(len(segments), 1), size):
            data, descr = call(segments[start : start + size])
            found = data.view(np.dtype(list(descr)))
            if query != "counts" and start:
                found = found.copy()
                found["segment"] += found["segment"].dtype.type(start)
            parts.append(found)
            done = min(start + size, len(segments))
            say(done)
    finally:
        say(None)
    if query == "counts":
        out = parts[0].copy()
        out["hits"] = np.sum([p["hits"] for p in parts], axis=0, dtype=out["hits"].dtype)
    else:
        out = np.concatenate(parts)
    return out.view(np.uint8), descr


def _sayer(progress, total):
    """A function told the segments done after each batch (``None`` at the end)."""
    if callable(progress):
        return lambda done: None if done is None else progress(done, total)
    if progress is not True:
        raise TypeError(f"progress: expected True, False, None or a callable (done, total), found {progress!r}")
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _Line(total)
    bar = tqdm(total=total, unit="segment", unit_scale=True, desc="rectcast")

    def say(done):
        if done is None:
            bar.close()
        else:
            bar.update(done - bar.n)

    return say


class _Line:
    """Progress on stderr without tqdm: one line, redrawn in place."""

    def __init__(self, total):
        self.total = total

    def __call__(self, done):
        if done is None:
            sys.stderr.write("\n")
        else:
            share = 100 * done // max(self.total, 1)
            sys.stderr.write(f"\rrectcast: {share:3d}% ({done:,} of {self.total:,} segments)")
        sys.stderr.flush()
