"""Segment-vs-rectangle collision for huge batches: numpy and Arrow in and out."""

from typing import Any, Literal, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

# numpy float32 (N, 4) in C order, any (N, 4) numeric array with copy=True, or Arrow data with
# the named float32 columns (anything with __arrow_c_stream__ or __arrow_c_array__).
Records = Union[npt.NDArray[Any], Any]
To = Literal["numpy", "arrow"]
Result = Any  # numpy structured array, or pyarrow.RecordBatch with to="arrow"

SEGMENT_COLUMNS: tuple[str, str, str, str]
RECT_COLUMNS: tuple[str, str, str, str]
KIND_NAMES: tuple[str, ...]
SIDE_NAMES: tuple[str, ...]

class Engine:
    def __init__(self, backend: Literal["auto", "gpu", "cpu"] = "auto", threads: int = 0) -> None: ...
    @property
    def chosen(self) -> str: ...
    def pairs(self, segments: Records, rects: Records, *, to: To = "numpy", copy: bool = False) -> Result: ...
    def first_hit(self, segments: Records, rects: Records, *, to: To = "numpy", copy: bool = False) -> Result: ...
    def first_hit_rects(self, segments: Records, rects: Records, *, copy: bool = False) -> npt.NDArray[np.int64]: ...
    def hits(self, segments: Records, rects: Records, *, to: To = "numpy", copy: bool = False) -> Result: ...
    def counts(self, segments: Records, rects: Records, *, to: To = "numpy", copy: bool = False) -> Result: ...
    def clip(
        self,
        segments: Records,
        rect: Optional[Sequence[float]] = None,
        *,
        rects: Optional[Records] = None,
        to: To = "numpy",
        copy: bool = False,
    ) -> Result: ...

def default_engine() -> Engine: ...
def pairs(segments: Records, rects: Records, *, to: To = "numpy", copy: bool = False) -> Result: ...
def first_hit(segments: Records, rects: Records, *, to: To = "numpy", copy: bool = False) -> Result: ...
def first_hit_rects(segments: Records, rects: Records, *, copy: bool = False) -> npt.NDArray[np.int64]: ...
def hits(segments: Records, rects: Records, *, to: To = "numpy", copy: bool = False) -> Result: ...
def counts(segments: Records, rects: Records, *, to: To = "numpy", copy: bool = False) -> Result: ...
def clip(
    segments: Records,
    rect: Optional[Sequence[float]] = None,
    *,
    rects: Optional[Records] = None,
    to: To = "numpy",
    copy: bool = False,
) -> Result: ...
