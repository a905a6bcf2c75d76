"""Labelled image sets for the deep contextual bandit: MNIST from IDX files, and scikit-learn's 8x8 digits.

Pixels are scaled to ``[-1, 1]`` (``2 p / p_max - 1``) and flattened, as the code that
accompanies Kveton et al. (2020) does (the paper does not say how it preprocesses them).

* :func:`load_mnist`: the IDX files ``*-images-idx3-ubyte`` and ``*-labels-idx1-ubyte``
  (optionally gzipped) from a folder: an argument, or ``$BAYESBANDIT_DATA/mnist``. Both the
  60,000-image training set and the 10,000-image test set are read (``split``).
* :func:`load_digits`: the 1,797 8x8 digits that ship with scikit-learn (the ``digits`` extra),
  no download: the embedded default of ``--quick`` runs.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import KW_ONLY, dataclass
from pathlib import Path

import numpy as np

from bayesbandit.datasets._paths import data_path
from bayesbandit.errors import InvalidInput

__all__ = ["ImageData", "load_mnist", "load_digits", "parse_idx"]

_IDX_TYPES = {0x08: "u1", 0x09: "i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


@dataclass(frozen=True, eq=False)
class ImageData:
    """Flattened images and their labels, checked on construction.

    ``images`` is ``(n, pixels)`` with finite values (the loaders scale them to ``[-1, 1]``);
    ``labels`` is ``(n,)`` integers in ``[0, num_classes)``; ``num_classes`` defaults to the
    largest label plus one.
    """

    images: np.ndarray  # (n, pixels) float32
    labels: np.ndarray  # (n,) int32 in [0, num_classes)
    source: str
    _: KW_ONLY
    classes: int | None = None

    def __post_init__(self) -> None:
        images, labels = np.asarray(self.images), np.asarray(self.labels)
        fix = "Fix: pass flattened images, one row per image, and one integer label per image."
        if images.ndim != 2 or images.shape[0] == 0 or images.shape[1] == 0:
            raise InvalidInput(
                f"ImageData 'images' must be a non-empty (n, pixels) array. Got shape {images.shape}. {fix}"
            )
        if not np.issubdtype(images.dtype, np.number) or not np.isfinite(images).all():
            bad = int(np.size(images) - np.isfinite(images).sum()) if np.issubdtype(images.dtype, np.number) else "all"
            raise InvalidInput(f"ImageData 'images' must be finite numbers. Got {bad} NaN or infinite pixels. {fix}")
        if labels.shape != (images.shape[0],) or not np.issubdtype(labels.dtype, np.integer):
            raise InvalidInput(
                f"ImageData 'labels' must be {images.shape[0]} integers (one per image). "
                f"Got shape {labels.shape}, dtype {labels.dtype}. {fix}"
            )
        limit = int(labels.max()) + 1 if self.classes is None else int(self.classes)
        if labels.min() < 0 or labels.max() >= limit:
            raise InvalidInput(
                f"ImageData 'labels' must lie in [0, {limit}). Got labels from {labels.min()} to {labels.max()}. {fix}"
            )
        object.__setattr__(self, "images", images.astype(np.float32))
        object.__setattr__(self, "labels", labels.astype(np.int32))

    @property
    def num_classes(self) -> int:
        return int(self.labels.max()) + 1 if self.classes is None else int(self.classes)

    def describe(self) -> str:
        counts = np.bincount(self.labels, minlength=self.num_classes)
        return (
            f"{self.images.shape[0]} images of {self.images.shape[1]} pixels, {self.num_classes} classes "
            f"({counts.min()}..{counts.max()} per class), from {self.source}"
        )


def parse_idx(data: bytes, source: str) -> np.ndarray:
    """An IDX array (the MNIST format: magic ``0 0 type ndim``, big-endian sizes, then the values)."""
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _IDX_TYPES:
        raise InvalidInput(
            f"{source} is not an IDX file (its first bytes are {data[:4]!r}). Fix: pass the MNIST IDX files."
        )
    ndim = data[3]
    header = 4 + 4 * ndim
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    dtype = np.dtype(_IDX_TYPES[data[2]])
    expected = header + int(np.prod(shape)) * dtype.itemsize
    if len(data) != expected:
        raise InvalidInput(
            f"{source} declares shape {shape} ({expected} bytes) but holds {len(data)} bytes: truncated?"
        )
    return np.frombuffer(data, dtype=dtype, offset=header).reshape(shape)


def _read(folder: Path, stem: str) -> tuple[np.ndarray, str]:
    for name in (stem, stem + ".gz"):
        path = folder / name
        if path.is_file():
            raw = path.read_bytes()
            return parse_idx(gzip.decompress(raw) if name.endswith(".gz") else raw, str(path)), str(path)
    raise InvalidInput(f"no {stem}[.gz] in {folder}. Fix: pass the folder holding the MNIST IDX files.")


def load_mnist(path: str | os.PathLike[str] | None = None, *, split: str = "test") -> ImageData:
    """MNIST from its IDX files, pixels scaled to ``[-1, 1]``.

    Parameters
    ----------
    path : path, optional
        The folder with ``t10k-images-idx3-ubyte[.gz]`` and ``t10k-labels-idx1-ubyte[.gz]``
        (``train-...`` for ``split="train"``); default ``$BAYESBANDIT_DATA/mnist``.
    split : {"test", "train"}
    """
    if split not in ("test", "train"):
        raise InvalidInput(f"The 'split' parameter of load_mnist must be 'test' or 'train'. Got {split!r} instead.")
    folder = data_path(path, "load_mnist", "mnist", "the folder holding the MNIST IDX files")
    prefix = "t10k" if split == "test" else "train"
    images, source = _read(folder, f"{prefix}-images-idx3-ubyte")
    labels, _ = _read(folder, f"{prefix}-labels-idx1-ubyte")
    if images.ndim != 3 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
        raise InvalidInput(f"{source}: images {images.shape} and labels {labels.shape} do not pair up.")
    flat = images.reshape(images.shape[0], -1).astype(np.float32)
    return ImageData((2.0 * flat / 255.0 - 1.0).astype(np.float32), labels.astype(np.int32), source, classes=10)


def load_digits() -> ImageData:
    """scikit-learn's 1,797 8x8 digits (64 pixels, values 0..16), scaled to ``[-1, 1]``; no download."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError as exc:
        raise InvalidInput(
            "load_digits needs scikit-learn (its 8x8 digits ship with it). Fix: pip install 'bayesbandit[digits]', "
            "or use load_mnist with the MNIST files."
        ) from exc
    bunch = sklearn_digits()
    images = (2.0 * bunch.data / 16.0 - 1.0).astype(np.float32)
    return ImageData(images, bunch.target.astype(np.int32), "scikit-learn's 8x8 digits (UCI optdigits)", classes=10)
