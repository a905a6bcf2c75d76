"""``bayesbandit.agent._packed.Layout``: a pytree as one vector of words and back, exactly, on device and host."""

import jax
import numpy as np
import pytest

from bayesbandit.agent._packed import Layout

# Every kind of leaf an agent's state or report holds, at the edges of its range (64-bit mode: float64 words).
TREE = {
    "flag": np.array([True, False, True]),
    "small": np.int8(-128),
    "count": np.array([-(2**31), 2**31 - 1, 0], np.int32),
    "words": np.array([0, 2**32 - 1, 12345], np.uint32),
    "wide": np.array([-(2**63), 2**63 - 1]),
    "single": np.array([1e-45, 3.4e38, -0.0], np.float32),
    "double": np.array([[5e-324, 1.7e308], [np.inf, -np.inf]]),
    "nothing": np.zeros((0, 3)),
}
# No leaf wider than 4 bytes: float32 words, the integers bit-cast into them (small ones are subnormal floats).
TREE32 = {
    "flag": np.array([True, False]),
    "count": np.array([-(2**31), 1, 2**31 - 1], np.int32),
    "words": np.array([1, 2**32 - 1], np.uint32),
    "half": np.array([6e-8, 65504.0], np.float16),
    "single": np.array([1e-45, 3.4e38, np.nan], np.float32),
}


def _assert_same(tree, expected):
    for got, want in zip(jax.tree.leaves(tree), jax.tree.leaves(expected), strict=True):
        got = np.asarray(got)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.view(np.uint8), np.asarray(want).view(np.uint8))  # bit for bit


@pytest.mark.parametrize("tree, word", [(TREE, np.float64), (TREE32, np.float32)], ids=["float64", "float32"])
def test_every_dtype_round_trips_bit_for_bit_on_the_device_and_the_host(tree, word):
    layout = Layout.exact(tree)
    assert layout.word == word and layout.size == sum(np.size(x) for x in jax.tree.leaves(tree))
    packed = jax.jit(layout.pack)(tree)
    assert packed.shape == (layout.size,) and packed.dtype == word
    _assert_same(jax.jit(layout.unpack)(packed), tree)
    _assert_same(layout.unpack_host(np.asarray(packed)), tree)
    host = layout.pack_host(tree)
    np.testing.assert_array_equal(host.view(np.uint8), np.asarray(packed).view(np.uint8))
    for i, leaf in enumerate(jax.tree.leaves(tree)):
        _assert_same(layout.host_leaf(host, i), np.asarray(leaf))


def test_the_first_leaf_is_the_first_word_and_each_dtype_is_one_block():
    report = (np.bool_(True), np.int32(7), {"steps": np.int32(3), "theta": np.ones(2), "ok": np.bool_(False)})
    layout = Layout.exact(report)
    host = np.asarray(jax.jit(layout.pack)(report))
    assert host[0] == 1.0 and host[1] == 0.0  # the Booleans, in tree order
    assert list(host[2:4]) == [7.0, 3.0]  # then the integers
    assert [dtype for dtype, _ in layout.groups] == [np.dtype(bool), np.dtype(np.int32), np.dtype(np.float64)]


def test_leaves_with_no_bytes_to_pack_are_refused():
    typed_key = {"key": jax.random.key(0), "x": np.zeros(2)}
    assert Layout.of(typed_key) is None
    with pytest.raises(TypeError, match="cannot be packed"):
        Layout.exact(typed_key)
