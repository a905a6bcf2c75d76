"""A pytree of arrays as one vector: how a compiled call's state and reports cross its boundary.

Each array a compiled call takes or returns costs the caller an argument or an output buffer and an
array object: about 2.5 us per output on XLA:CPU, where the online GLM-TSL round computes in tens of
microseconds. A GLM state has six leaves and an update's Info about ten, so a fixed-arm agent keeps
its state as one vector between calls (unpacked inside the next call, where the slices fuse into
their consumers) and reads each call's report, the convergence flag, the next action and the Infos,
from one more.

The vector's elements are words of the widest float among the leaves (float64 with 64-bit mode,
else float32). A leaf of the word's width is bit-cast (``int32`` in float32 words, ``int64`` in
float64), a narrower one converted, which is exact (every ``int32`` is a float64, a boolean 0 or 1;
a narrower float goes as the unsigned integer of its bits, since XLA:CPU flushes subnormals when it
converts floats): every dtype round-trips exactly. The leaves of one dtype lie side by
side and are encoded or decoded together: one elementwise kernel per dtype, not per leaf (the online
GLM-TSL round's report has a dozen small integer and Boolean leaves).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["Layout", "HeldState", "Report", "ReportPart"]


class Layout(NamedTuple):
    """Where each leaf of a pytree lies in its vector: the structure, the leaves' shapes and dtypes, the word.

    Leaves of one dtype lie side by side (the dtypes in the order they first appear, the leaves of each
    in tree order), so packing converts each dtype once, not each leaf. Hashable, so a compiled call
    takes it as a static argument.
    """

    treedef: Any
    shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[np.dtype, ...]
    groups: tuple[tuple[np.dtype, tuple[int, ...]], ...]  # each dtype and its leaves, in vector order
    starts: tuple[int, ...]  # where each leaf starts, in words
    word: np.dtype

    @classmethod
    def of(cls, tree: Any) -> Layout | None:
        """The layout of ``tree`` (arrays or tracers); ``None`` if a leaf is not a real number or a boolean
        (a typed PRNG key, say), or is wider than every float leaf (an ``int64`` beside float32 leaves)."""
        leaves, treedef = jax.tree.flatten(tree)
        try:
            dtypes = tuple(np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype for x in leaves)
        except TypeError:  # an extended dtype (a typed PRNG key) has no NumPy dtype
            return None
        if not all(dt.kind in "biuf" for dt in dtypes):
            return None
        widest = max((dt.itemsize for dt in dtypes), default=4)
        if widest > 8 or (widest == 8 and not jax.config.read("jax_enable_x64")):
            return None
        shapes = tuple(tuple(np.shape(x)) for x in leaves)
        members: dict[np.dtype, list[int]] = {}
        for i, dt in enumerate(dtypes):
            members.setdefault(dt, []).append(i)
        starts, position = [0] * len(leaves), 0
        for indices in members.values():
            for i in indices:
                starts[i], position = position, position + math.prod(shapes[i])
        groups = tuple((dt, tuple(indices)) for dt, indices in members.items())
        word = np.dtype(np.float64 if widest == 8 else np.float32)
        return cls(treedef, shapes, dtypes, groups, tuple(starts), word)

    @classmethod
    def exact(cls, tree: Any) -> Layout:
        """:meth:`of`, for a tree that must pack: raises ``TypeError`` naming the dtypes otherwise."""
        layout = cls.of(tree)
        if layout is None:
            dtypes = sorted({str(getattr(x, "dtype", type(x))) for x in jax.tree.leaves(tree)})
            raise TypeError(f"a tree with leaves of dtypes {dtypes} cannot be packed into one vector of words")
        return layout

    @property
    def size(self) -> int:
        """The vector's length, in words."""
        return sum(math.prod(shape) for shape in self.shapes)

    def spec(self) -> jax.ShapeDtypeStruct:
        """The vector's shape and dtype (to compile a call for it)."""
        return jax.ShapeDtypeStruct((self.size,), self.word)

    def _group_span(self, indices: tuple[int, ...]) -> tuple[int, int]:
        first, last = indices[0], indices[-1]
        return self.starts[first], self.starts[last] + math.prod(self.shapes[last])

    def _carrier(self, dtype: np.dtype) -> np.dtype | None:
        """What a narrower float is bit-cast to before it is converted to a word: the unsigned integer of its
        width (converting the float itself would flush its subnormals on XLA:CPU); ``None``: no bit-cast."""
        return np.dtype(f"uint{8 * dtype.itemsize}") if dtype.kind == "f" and dtype != self.word else None

    def pack(self, tree: Any) -> Any:
        """``tree``'s leaves as one vector of words (traceable): each dtype's leaves joined, then encoded."""
        leaves = jax.tree.leaves(tree)
        parts = []
        for dtype, indices in self.groups:
            joined = jnp.concatenate([jnp.ravel(jnp.asarray(leaves[i], dtype)) for i in indices])
            if dtype.itemsize == self.word.itemsize:
                parts.append(jax.lax.bitcast_convert_type(joined, self.word))
                continue
            carrier = self._carrier(dtype)
            if carrier is not None:
                joined = jax.lax.bitcast_convert_type(joined, carrier)
            parts.append(joined.astype(self.word))
        return jnp.concatenate(parts) if parts else jnp.zeros((0,), self.word)

    def unpack(self, vector: Any) -> Any:
        """The tree :meth:`pack` made ``vector`` from (traceable): each dtype decoded once, then sliced."""
        leaves: list[Any] = [None] * len(self.shapes)
        for dtype, indices in self.groups:
            start, end = self._group_span(indices)
            words = vector[start:end]
            carrier = self._carrier(dtype)
            if dtype == np.bool_:
                decoded = words != 0
            elif dtype.itemsize == self.word.itemsize:
                decoded = jax.lax.bitcast_convert_type(words, dtype)
            elif carrier is not None:
                decoded = jax.lax.bitcast_convert_type(words.astype(carrier), dtype)
            else:
                decoded = words.astype(dtype)
            for i in indices:
                offset = self.starts[i] - start
                leaves[i] = jnp.reshape(decoded[offset : offset + math.prod(self.shapes[i])], self.shapes[i])
        return jax.tree.unflatten(self.treedef, leaves)

    def pack_host(self, tree: Any) -> np.ndarray:
        """:meth:`pack` in NumPy: a host vector for a compiled call to unpack (one argument, one transfer)."""
        vector = np.empty(self.size, self.word)
        for x, shape, dtype, start in zip(jax.tree.leaves(tree), self.shapes, self.dtypes, self.starts, strict=True):
            flat = np.asarray(x, dtype).ravel()
            carrier = self._carrier(dtype)
            if dtype.itemsize == self.word.itemsize:
                flat = flat.view(self.word)
            elif carrier is not None:
                flat = flat.view(carrier)
            vector[start : start + math.prod(shape)] = flat
        return vector

    def unpack_host(self, vector: np.ndarray) -> Any:
        """:meth:`unpack` in NumPy, each leaf a copy."""
        return jax.tree.unflatten(self.treedef, [self.host_leaf(vector, i) for i in range(len(self.shapes))])

    def host_leaf(self, vector: np.ndarray, index: int) -> np.ndarray:
        """Leaf ``index`` alone, from a host copy of the vector (a tuple's top-level arrays are its first leaves)."""
        start, dtype = self.starts[index], self.dtypes[index]
        words = vector[start : start + math.prod(self.shapes[index])]
        carrier = self._carrier(dtype)
        if dtype == np.bool_:
            leaf = words != 0
        elif dtype.itemsize == self.word.itemsize:
            leaf = words.view(dtype).copy()
        elif carrier is not None:
            leaf = words.astype(carrier).view(dtype)
        else:
            leaf = words.astype(dtype)
        return leaf.reshape(self.shapes[index])


class HeldState:
    """An agent's state: as a pytree, as the vector of its :class:`Layout`, or both, each made from the
    other on first use (one compiled call). Replaced whole on every change, so a thread holding one reads
    one consistent state; two threads converting at once compute equal values."""

    __slots__ = ("_tree", "_buffer", "layout")

    def __init__(self, tree: Any = None, buffer: Any = None, layout: Layout | None = None) -> None:
        self._tree, self._buffer, self.layout = tree, buffer, layout

    def tree(self) -> Any:
        if self._tree is None:  # on the host: no program to compile for a conversion made now and then
            assert self.layout is not None  # a held state without a tree has a vector, hence a layout
            self._tree = jax.tree.map(jnp.asarray, self.layout.unpack_host(np.asarray(self._buffer)))
        return self._tree

    def buffer(self) -> Any:
        if self._buffer is None:
            assert self.layout is not None, "a state without a layout is never packed"
            self._buffer = jnp.asarray(self.layout.pack_host(self._tree))
        return self._buffer


class Report:
    """A compiled call's report, the :class:`Layout`-packed tuple ``(converged, ...)``, copied to the host once.

    The flag (a boolean, the first word) and single leaves are read without unpacking the rest.
    """

    __slots__ = ("_host", "_layout", "_tree")

    def __init__(self, buffer: Any, layout: Layout) -> None:
        self._host = np.asarray(buffer)
        self._layout = layout
        self._tree: Any = None

    @property
    def converged(self) -> bool:
        return bool(self._host[0])

    def leaf(self, index: int) -> np.ndarray:
        """Top-level element ``index`` of the report, when it is one array."""
        return self._layout.host_leaf(self._host, index)

    def part(self, index: int) -> Any:
        """Top-level element ``index`` of the report, with NumPy leaves."""
        if self._tree is None:
            self._tree = self._layout.unpack_host(self._host)
        return self._tree[index]


class ReportPart(NamedTuple):
    """An Info that is element ``position`` of a :class:`Report`, unpacked on first use."""

    report: Report
    position: int

    @property
    def all_converged(self) -> bool:
        return self.report.converged

    def unpack(self) -> Any:
        return self.report.part(self.position)
