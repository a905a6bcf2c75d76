"""Image sets for the deep contextual bandit: the IDX reader, the loaders' scaling and their checks."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np
import pytest

from bayesbandit.datasets.images import ImageData, load_digits, load_mnist, parse_idx
from bayesbandit.errors import InvalidInput


def _idx(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    return header + array.astype(np.uint8).tobytes()


def _write_mnist(folder: Path, images: np.ndarray, labels: np.ndarray, gz: bool) -> None:
    for stem, array in (("t10k-images-idx3-ubyte", images), ("t10k-labels-idx1-ubyte", labels)):
        raw = _idx(array)
        (folder / (stem + ".gz" if gz else stem)).write_bytes(gzip.compress(raw) if gz else raw)


@pytest.mark.parametrize("gz", [False, True])
def test_load_mnist_reads_idx_files_and_scales_pixels(tmp_path, gz):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (7, 3, 4))
    images[0, 0, 0], images[0, 0, 1] = 0, 255
    labels = np.array([0, 1, 2, 9, 3, 3, 5])
    _write_mnist(tmp_path, images, labels, gz)
    data = load_mnist(tmp_path)
    assert data.images.shape == (7, 12) and data.images.dtype == np.float32
    np.testing.assert_allclose(data.images, 2 * images.reshape(7, 12) / 255 - 1, atol=1e-6)
    assert data.images[0, 0] == -1 and data.images[0, 1] == 1
    np.testing.assert_array_equal(data.labels, labels)
    assert data.num_classes == 10 and "7 images of 12 pixels, 10 classes" in data.describe()


def test_load_mnist_reads_bayesbandit_data(tmp_path, monkeypatch):
    (tmp_path / "mnist").mkdir()
    _write_mnist(tmp_path / "mnist", np.zeros((2, 2, 2)), np.array([1, 0]), gz=False)
    monkeypatch.setenv("BAYESBANDIT_DATA", str(tmp_path))
    assert load_mnist().images.shape == (2, 4)
    monkeypatch.delenv("BAYESBANDIT_DATA")
    with pytest.raises(InvalidInput, match="BAYESBANDIT_DATA"):
        load_mnist()


def test_load_mnist_rejects_missing_truncated_and_foreign_files(tmp_path):
    with pytest.raises(InvalidInput, match="no t10k-images-idx3-ubyte"):
        load_mnist(tmp_path)
    with pytest.raises(InvalidInput, match="split"):
        load_mnist(tmp_path, split="validation")
    raw = _idx(np.zeros((3, 2, 2)))
    with pytest.raises(InvalidInput, match="truncated"):
        parse_idx(raw[:-1], "images")
    with pytest.raises(InvalidInput, match="not an IDX file"):
        parse_idx(b"\x89PNG" + raw, "images")
    _write_mnist(tmp_path, np.zeros((3, 2, 2)), np.array([0, 1]), gz=False)
    with pytest.raises(InvalidInput, match="do not pair up"):
        load_mnist(tmp_path)
    _write_mnist(tmp_path, np.zeros((2, 2, 2)), np.array([0, 12]), gz=False)
    with pytest.raises(InvalidInput, match="labels.*must lie in \\[0, 10\\)"):
        load_mnist(tmp_path)


@pytest.mark.parametrize(
    ("images", "labels", "match"),
    [
        (np.zeros((3, 2, 2)), [0, 1, 2], "images.*\\(n, pixels\\)"),
        (np.array([[0.0, np.nan], [0.0, 1.0]]), [0, 1], "1 NaN or infinite"),
        (np.zeros((2, 4)), [0, 1, 2], "labels.*2 integers"),
        (np.zeros((2, 4)), [0.0, 1.0], "labels.*2 integers"),
        (np.zeros((2, 4)), [0, -1], "must lie in"),
    ],
)
def test_image_data_names_what_is_wrong(images, labels, match):
    with pytest.raises(InvalidInput, match=match):
        ImageData(np.asarray(images), np.asarray(labels), "test")
    with pytest.raises(InvalidInput, match="must lie in \\[0, 3\\)"):
        ImageData(np.zeros((2, 4)), np.array([0, 3]), "test", classes=3)


def test_load_digits_is_the_embedded_default():
    pytest.importorskip("sklearn")
    data = load_digits()
    assert data.images.shape == (1797, 64) and data.num_classes == 10
    assert data.images.min() == -1.0 and data.images.max() == 1.0


@pytest.mark.skipif(not os.environ.get("BAYESBANDIT_DATA"), reason="needs BAYESBANDIT_DATA with mnist/")
def test_mnist_test_set_from_the_shared_data():
    data = load_mnist()
    assert data.images.shape == (10_000, 784)
    np.testing.assert_array_equal(np.bincount(data.labels)[[0, 1]], [980, 1135])
