"""The checkpoint file format: round trips, damage detection, no pickle, atomic saves, fingerprints."""

import hashlib
import json
import os
import pickle
import struct

import jax
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from bayesbandit.models import logistic, poisson

import bayesbandit as bb
from bayesbandit.checkpoint import FORMAT_VERSION, array_fingerprint, read_checkpoint, write_checkpoint
from bayesbandit.errors import CheckpointError, InvalidInput, PrecisionError
from bayesbandit.inference.fingerprint import program_fingerprint

MAGIC = b"BBCKPT\x00\x00"


def _build(header, payload=b""):
    """A checkpoint assembled by hand from the documented layout, with a valid checksum."""
    if isinstance(header, dict):
        header = json.dumps(header, sort_keys=True).encode("utf-8")
    body = MAGIC + struct.pack("<Q", len(header)) + header + payload
    return body + hashlib.sha256(body).digest()


def _entry(dtype, shape, offset, nbytes):
    return {"dtype": dtype, "shape": list(shape), "offset": offset, "nbytes": nbytes}


def _partials(folder):
    return sorted(name for name in os.listdir(folder) if ".partial-" in name)


@pytest.fixture
def small(tmp_path):
    """A small checkpoint on disk (a few arrays, about 1 KB) and its content."""
    meta = {"policy": "GLMTSL", "t": 7, "arms": [[0.5, -1.0], [2.0, 0.25]], "seed": None, "ok": True}
    arrays = [
        np.linspace(-1.0, 1.0, 48).reshape(6, 8),
        np.arange(10, dtype=np.int32),
        np.array([True, False, True]),
        np.array(2.5),
    ]
    path = tmp_path / "agent.bbckpt"
    write_checkpoint(path, meta, arrays)
    return path, meta, arrays


# ---------------------------------------------------------------------------------- round trip
def test_round_trip_preserves_meta_values_dtypes_and_shapes(tmp_path):
    meta = {
        "name": "agent \u00e9\u2603",
        "nested": {"a": [1, 2.5, None, True, "x"], "b": {}},
        "floats": [0.1, 1e-300, -0.0, 1.7976931348623157e308],
        "big": 2**70,
        "empty": [],
    }
    arrays = [
        np.array([[1.5, np.nan, -np.inf], [np.inf, -0.0, 1e-310]]),  # float64, 2-d, special values
        np.array([-(2**31), 0, 2**31 - 1], dtype=np.int32),
        np.array([0, 7, 2**32 - 1], dtype=np.uint32),
        np.array([[True, False], [False, True]]),
        np.array(3.25),  # 0-d
        np.zeros((0, 3), dtype=np.float32),  # empty
        np.array([1 + 2j, -3.5j], dtype=np.complex128),
        np.arange(-4, 4, dtype=np.int8).reshape(2, 2, 2),
    ]
    path = tmp_path / "ck.bbckpt"
    write_checkpoint(path, meta, arrays)
    meta_back, arrays_back = read_checkpoint(path)

    assert meta_back == meta
    assert json.dumps(meta_back, sort_keys=True) == json.dumps(meta, sort_keys=True)  # -0.0 kept too
    assert len(arrays_back) == len(arrays)
    for original, back in zip(arrays, arrays_back):
        assert back.dtype == original.dtype
        assert back.shape == original.shape
        assert back.tobytes() == original.tobytes()  # bit-exact: NaN, -0.0 and subnormals included
        assert back.flags.writeable and back.flags.c_contiguous


def test_round_trip_of_non_native_layouts_and_str_path(tmp_path):
    base = np.arange(12, dtype=np.float64).reshape(3, 4)
    arrays = [base.T, base[:, ::2], base.astype(">i4"), np.asfortranarray(base)]
    path = str(tmp_path / "ck.bbckpt")
    write_checkpoint(path, {}, tuple(arrays))
    meta, back = read_checkpoint(path)
    assert meta == {}
    for original, restored in zip(arrays, back):
        np.testing.assert_array_equal(restored, original)
        assert restored.dtype == original.dtype.newbyteorder("=")  # big-endian comes back native
        assert restored.dtype.isnative


def test_no_arrays_and_overwrite(tmp_path):
    path = tmp_path / "ck.bbckpt"
    write_checkpoint(path, {"v": 1}, [np.ones(3)])
    write_checkpoint(path, {"v": 2}, [])
    assert read_checkpoint(path) == ({"v": 2}, [])


def test_file_follows_the_documented_layout(small):
    path, meta, arrays = small
    data = path.read_bytes()
    assert data.startswith(MAGIC)
    (length,) = struct.unpack_from("<Q", data, 8)
    header = json.loads(data[16 : 16 + length].decode("utf-8"))
    assert data[16 : 16 + length] == json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    assert header["format_version"] == FORMAT_VERSION == 1
    assert header["meta"] == meta
    assert [e["dtype"] for e in header["arrays"]] == ["<f8", "<i4", "|b1", "<f8"]
    payload = data[16 + length : -32]
    for entry, array in zip(header["arrays"], arrays):
        assert entry["shape"] == list(array.shape)
        assert payload[entry["offset"] : entry["offset"] + entry["nbytes"]] == array.astype(entry["dtype"]).tobytes()
    assert data[-32:] == hashlib.sha256(data[:-32]).digest()


# ------------------------------------------------------------------------------------- damage
def test_every_single_bit_flip_is_detected(small):
    path, meta, _ = small
    original = path.read_bytes()
    assert 500 <= len(original) <= 3000
    undetected = []
    with open(path, "r+b", buffering=0) as f:  # rewrite one byte in place: much faster than a new file per bit
        for bit in range(8 * len(original)):
            byte = bit // 8
            f.seek(byte)
            f.write(bytes([original[byte] ^ (1 << (bit % 8))]))
            try:
                read_checkpoint(path)
            except CheckpointError:
                pass
            except Exception as exc:  # any other exception type is a bug
                undetected.append((bit, repr(exc)))
            else:
                undetected.append((bit, "no error"))
            f.seek(byte)
            f.write(original[byte : byte + 1])
    assert undetected == []
    assert path.read_bytes() == original
    assert read_checkpoint(path)[0] == meta  # control: the restored bytes still read


def test_bit_flips_after_the_magic_are_reported_as_corruption(small):
    path, _, _ = small
    data = bytearray(path.read_bytes())
    for byte in (8, 20, len(data) // 2, len(data) - 40, len(data) - 1):
        flipped = data.copy()
        flipped[byte] ^= 0x10
        path.write_bytes(flipped)
        with pytest.raises(CheckpointError, match="corrupted: its SHA-256 checksum does not match") as info:
            read_checkpoint(path)
        assert str(path) in str(info.value) and "modified or damaged" in str(info.value)


@pytest.mark.parametrize("cut", ["0", "7", "15", "middle", "len-1"])
def test_truncated_files_are_refused(small, cut):
    path, _, _ = small
    data = path.read_bytes()
    length = {"0": 0, "7": 7, "15": 15, "middle": len(data) // 2, "len-1": len(data) - 1}[cut]
    path.write_bytes(data[:length])
    with pytest.raises(CheckpointError, match="truncated"):
        read_checkpoint(path)


def test_every_prefix_is_refused(small):
    path, _, _ = small
    data = path.read_bytes()
    for length in range(len(data)):
        path.write_bytes(data[:length])
        with pytest.raises(CheckpointError):
            read_checkpoint(path)


def test_appended_bytes_are_refused(small):
    path, _, _ = small
    path.write_bytes(path.read_bytes() + b"\x00")
    with pytest.raises(CheckpointError, match="corrupted"):
        read_checkpoint(path)


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"", "truncated"),
        (b"\x00" * 7, "truncated"),
        (bytes(range(256)) * 4, "not a bayesbandit checkpoint"),
        (b"hello, this is plain text and not a checkpoint at all\n" * 3, "not a bayesbandit checkpoint"),
        (pickle.dumps({"theta": [1.0, 2.0], "t": 3}), "not a bayesbandit checkpoint"),
        (pickle.dumps(np.arange(100.0)), "not a bayesbandit checkpoint"),
        (MAGIC + bytes(range(200)), "corrupted"),
    ],
    ids=["empty", "short-zeros", "garbage", "text", "pickle-dict", "pickle-array", "magic-then-garbage"],
)
def test_files_that_are_not_checkpoints_are_refused(tmp_path, content, match):
    path = tmp_path / "x.bbckpt"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match=match) as info:
        read_checkpoint(path)
    assert str(path) in str(info.value)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint at .*nope.bbckpt"):
        read_checkpoint(tmp_path / "nope.bbckpt")
    with pytest.raises(CheckpointError, match="cannot read checkpoint"):
        read_checkpoint(tmp_path)


# -------------------------------------------------------------------------------- versions, header
def _valid_header(version, meta=None):
    return {
        "arrays": [_entry("<f8", [2], 0, 16), _entry("|b1", [1], 16, 1)],
        "format_version": version,
        "meta": {"note": "built by hand"} if meta is None else meta,
    }


_PAYLOAD = np.array([1.5, -2.0]).tobytes() + b"\x01"


def test_hand_built_checkpoint_reads(tmp_path):
    """Control for the tests below: the hand-built bytes are a valid version-1 checkpoint."""
    path = tmp_path / "hand.bbckpt"
    path.write_bytes(_build(_valid_header(1), _PAYLOAD))
    meta, arrays = read_checkpoint(path)
    assert meta == {"note": "built by hand"}
    np.testing.assert_array_equal(arrays[0], [1.5, -2.0])
    np.testing.assert_array_equal(arrays[1], [True])


@pytest.mark.parametrize("version", [999, 2, 0])
def test_unknown_format_version_is_refused(tmp_path, version):
    path = tmp_path / "future.bbckpt"
    # A later version may lay out its header differently: the version is checked before the rest.
    header = {"format_version": version, "meta": {}, "tensors": "something new"}
    path.write_bytes(_build(header, _PAYLOAD))
    with pytest.raises(CheckpointError, match=f"written by format version {version}; this bayesbandit reads version 1"):
        read_checkpoint(path)
    path.write_bytes(_build(_valid_header(version), _PAYLOAD))
    with pytest.raises(CheckpointError, match=f"format version {version}"):
        read_checkpoint(path)


def _huge_length():
    body = MAGIC + struct.pack("<Q", 2**64 - 1) + b"{}"
    return body + hashlib.sha256(body).digest()


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (_huge_length(), "header length .* runs past the end"),
        (_build(b"\xff\xfe{}", _PAYLOAD), "not valid UTF-8 JSON"),
        (_build(b"{not json", _PAYLOAD), "not valid UTF-8 JSON"),
        (_build(b"[" * 100_000 + b"]" * 100_000), "not valid UTF-8 JSON"),
        (_build(b"[1, 2]"), "header is a JSON list"),
        (_build({"meta": {}, "arrays": []}), "no integer format_version"),
        (_build({"format_version": "1", "meta": {}, "arrays": []}), "no integer format_version"),
        (_build({"format_version": True, "meta": {}, "arrays": []}), "no integer format_version"),
        (_build({"format_version": 1, "meta": [], "arrays": []}), "meta is a JSON list"),
        (_build({"format_version": 1, "meta": {}, "arrays": {}}), "array table is a JSON dict"),
        (_build({"format_version": 1, "meta": {}}), "header has keys"),
        (_build({**_valid_header(1), "arrays": [_entry("<f8", [4], 0, 32)]}, _PAYLOAD), "outside the payload"),
        (_build({**_valid_header(1), "arrays": [_entry("<f8", [2], 2**40, 16)]}, _PAYLOAD), "outside the payload"),
        (_build({**_valid_header(1), "arrays": [_entry("|O", [2], 0, 16)]}, _PAYLOAD), "dtype"),
        (_build({**_valid_header(1), "arrays": [_entry(">f8", [2], 0, 16)]}, _PAYLOAD), "dtype"),
        (_build({**_valid_header(1), "arrays": [_entry("<f8", [-2], 0, 16)]}, _PAYLOAD), "shape"),
        (_build({**_valid_header(1), "arrays": [_entry("<f8", [2.0], 0, 16)]}, _PAYLOAD), "shape"),
        (_build({**_valid_header(1), "arrays": [_entry("<f8", [3], 0, 16)]}, _PAYLOAD), "needs 24"),
        (_build({**_valid_header(1), "arrays": [_entry("<f8", [2], -1, 16)]}, _PAYLOAD), "non-negative"),
        (_build({**_valid_header(1), "arrays": [_entry("<f8", [1], 8, 8)]}, _PAYLOAD), "not right after"),
        (_build({**_valid_header(1), "arrays": [_entry("<f8", [2], 0, 16)]}, _PAYLOAD), "1 bytes after the last"),
        (_build({**_valid_header(1), "arrays": [[0, 16]]}, _PAYLOAD), "not an object with keys"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_malformed_header_with_valid_checksum_is_refused(tmp_path, data, match):
    path = tmp_path / "bad.bbckpt"
    path.write_bytes(data)
    with pytest.raises(CheckpointError, match=match) as info:
        read_checkpoint(path)
    assert str(path) in str(info.value) and "malformed" in str(info.value)


# ------------------------------------------------------------------------------------- no pickle
def test_reading_never_unpickles(small, monkeypatch):
    path, meta, arrays = small

    def refuse(*args, **kwargs):
        raise AssertionError("read_checkpoint must not unpickle")

    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "Unpickler", refuse)
    meta_back, arrays_back = read_checkpoint(path)
    assert meta_back == meta
    for original, back in zip(arrays, arrays_back):
        np.testing.assert_array_equal(back, original)
    assert path.read_bytes().startswith(MAGIC)  # not a pickle stream (those start with b"\x80")


@pytest.mark.parametrize(
    "array",
    [
        np.array([{"a": 1}, None], dtype=object),
        np.array(["a", "bc"]),
        np.array([b"a"]),
        np.zeros(2, dtype=[("a", "<f8"), ("b", "<i4")]),
        np.array(["2020-01-01"], dtype="datetime64[D]"),
        np.zeros(2, dtype=np.longdouble) if np.dtype(np.longdouble).itemsize > 8 else np.array([None], dtype=object),
    ],
    ids=["object", "unicode", "bytes", "structured", "datetime", "longdouble"],
)
def test_write_rejects_non_numeric_arrays(tmp_path, array):
    path = tmp_path / "ck.bbckpt"
    with pytest.raises(InvalidInput, match=r"arrays\[1\] has dtype"):
        write_checkpoint(path, {}, [np.ones(2), array])
    assert not path.exists() and _partials(tmp_path) == []


@pytest.mark.parametrize(
    ("meta", "match"),
    [
        ({"agent": {"rng": object()}}, r"meta\['agent'\]\['rng'\] is of type object"),
        ({"t": np.int64(3)}, r"meta\['t'\] is of type int64 \(convert it with \.item\(\)"),
        ({"x": [1.0, float("nan")]}, r"meta\['x'\]\[1\] is nan"),
        ({"x": {3: "a"}}, r"meta\['x'\] has key 3 of type int"),
        ({"s": "\ud800"}, r"meta\['s'\] is a string that is not valid Unicode"),
        ({"f": {1.5}}, r"meta\['f'\] is of type set"),
        ([("a", 1)], "meta must be a dict"),
    ],
)
def test_write_rejects_non_json_meta_naming_the_key(tmp_path, meta, match):
    path = tmp_path / "ck.bbckpt"
    with pytest.raises(InvalidInput, match=match):
        write_checkpoint(path, meta, [])
    assert not path.exists() and _partials(tmp_path) == []


def test_write_rejects_circular_meta_and_a_bare_array(tmp_path):
    loop: dict = {"a": 1}
    loop["self"] = loop
    with pytest.raises(InvalidInput, match=r"meta\['self'\] contains itself"):
        write_checkpoint(tmp_path / "ck", loop, [])
    with pytest.raises(InvalidInput, match="sequence"):
        write_checkpoint(tmp_path / "ck", {}, np.ones((2, 2)))  # type: ignore[arg-type]
    assert os.listdir(tmp_path) == []


# ------------------------------------------------------------------------------------- atomicity
def test_failed_rename_keeps_the_old_checkpoint(small, monkeypatch):
    path, meta, arrays = small

    def fail(*args, **kwargs):
        raise OSError("simulated failure in os.replace")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="simulated failure in os.replace"):
        write_checkpoint(path, {"new": True}, [np.zeros(5)])
    monkeypatch.undo()
    assert _partials(path.parent) == []
    meta_back, arrays_back = read_checkpoint(path)
    assert meta_back == meta
    assert [a.tobytes() for a in arrays_back] == [a.tobytes() for a in arrays]


def test_failed_fsync_keeps_the_old_checkpoint(small, monkeypatch):
    path, meta, arrays = small
    calls = []

    def fail(fd):
        calls.append(fd)
        raise OSError("simulated failure in os.fsync")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError, match="simulated failure in os.fsync"):
        write_checkpoint(path, {"new": True}, [np.zeros(5)])
    monkeypatch.undo()
    assert calls, "write_checkpoint must fsync the temporary file"
    assert _partials(path.parent) == []
    meta_back, arrays_back = read_checkpoint(path)
    assert meta_back == meta
    assert [a.tobytes() for a in arrays_back] == [a.tobytes() for a in arrays]


def test_failed_first_save_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "replace", lambda *a, **k: (_ for _ in ()).throw(OSError("no")))
    with pytest.raises(OSError):
        write_checkpoint(tmp_path / "ck.bbckpt", {}, [np.ones(3)])
    assert os.listdir(tmp_path) == []


def test_temporary_file_is_written_next_to_the_target(tmp_path, monkeypatch):
    seen = []
    real_replace = os.replace

    def spy(src, dst):
        seen.append((os.path.basename(src), os.path.basename(dst), os.path.dirname(src) == os.path.dirname(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    write_checkpoint(tmp_path / "ck.bbckpt", {}, [np.ones(3)])
    [(src, dst, same_folder)] = seen
    assert dst == "ck.bbckpt" and same_folder
    prefix = ".ck.bbckpt.partial-"
    assert src.startswith(prefix) and len(src) > len(prefix)
    int(src[len(prefix) :], 16)  # random hex


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_file_mode_follows_the_umask(tmp_path, umask, mode):
    previous = os.umask(umask)
    try:
        write_checkpoint(tmp_path / "ck.bbckpt", {}, [])
    finally:
        os.umask(previous)
    assert (tmp_path / "ck.bbckpt").stat().st_mode & 0o777 == mode


# -------------------------------------------------------------------------------- stale partials
@pytest.mark.parametrize("name", ["agent.bbckpt", "run[1]*.ckpt"])
def test_stale_partials_are_removed_by_the_next_save(tmp_path, name):
    stale = tmp_path / f".{name}.partial-deadbeef"
    other = tmp_path / f".{name}2.partial-deadbeef"  # another target's
    unrelated = tmp_path / f"{name}.partial-deadbeef"  # not a hidden temporary file
    for p in (stale, other, unrelated):
        p.write_bytes(b"half a checkpoint")
    write_checkpoint(tmp_path / name, {"a": 1}, [])
    assert not stale.exists()
    assert other.exists() and unrelated.exists()
    assert read_checkpoint(tmp_path / name) == ({"a": 1}, [])


def test_stale_partials_are_removed_by_the_next_load(small):
    path, meta, _ = small
    stale = path.parent / f".{path.name}.partial-deadbeef"
    stale2 = path.parent / f".{path.name}.partial-0123456789abcdef"
    other = path.parent / ".other.bbckpt.partial-deadbeef"
    for p in (stale, stale2, other):
        p.write_bytes(b"half a checkpoint")
    assert read_checkpoint(path)[0] == meta
    assert not stale.exists() and not stale2.exists()
    assert other.exists()


def test_stale_partials_of_a_missing_checkpoint_are_removed_by_a_load(tmp_path):
    stale = tmp_path / ".gone.bbckpt.partial-deadbeef"
    stale.write_bytes(b"x")
    with pytest.raises(CheckpointError, match="no checkpoint"):
        read_checkpoint(tmp_path / "gone.bbckpt")
    assert not stale.exists()


@pytest.mark.skipif(os.name != "posix", reason="flock")
def test_a_partial_being_written_is_not_stale(small):
    """A temporary file locked by a live writer survives a concurrent load; once released, it goes."""
    import fcntl

    path, meta, _ = small
    live = path.parent / f".{path.name}.partial-cafe"
    with open(live, "wb") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        assert read_checkpoint(path)[0] == meta
        assert live.exists()
    read_checkpoint(path)
    assert not live.exists()


# ---------------------------------------------------------------------------------- fingerprints
def test_array_fingerprint():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    fp = array_fingerprint(a)
    assert len(fp) == 64 and int(fp, 16) >= 0
    assert array_fingerprint(a.copy()) == fp
    assert array_fingerprint(np.asfortranarray(a)) == fp  # layout does not matter
    assert array_fingerprint(a.astype(">f8")) == fp  # nor byte order
    assert array_fingerprint(a.tolist()) == fp

    flipped = a.copy()
    flipped.reshape(-1).view(np.uint8)[3] ^= 1  # one bit of one value
    assert array_fingerprint(flipped) != fp
    assert array_fingerprint(a.view(np.int64)) != fp  # same bytes, another dtype
    assert array_fingerprint(a.reshape(3, 2)) != fp  # same bytes, another shape
    assert array_fingerprint(a.reshape(6)) != fp
    assert array_fingerprint(a.T) != fp
    assert array_fingerprint(np.zeros((0, 2))) != array_fingerprint(np.zeros((2, 0)))
    assert array_fingerprint(np.array(1.0)) != array_fingerprint(np.array([1.0]))
    with pytest.raises(InvalidInput):
        array_fingerprint(np.array([object()]))


def _logistic_program(x, y=None):
    """A module-level logistic program, written out by hand: the same model as logistic(2.0)."""
    theta = numpyro.sample("theta", dist.Normal(0.0, 2.0).expand([x.shape[-1]]).to_event(1))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("y", dist.Bernoulli(logits=x @ theta), obs=y)


def _make_logistic_program(prior_scale):
    def program(x, y=None):
        theta = numpyro.sample("theta", dist.Normal(0.0, prior_scale).expand([x.shape[-1]]).to_event(1))
        with numpyro.plate("data", x.shape[0]):
            numpyro.sample("y", dist.Bernoulli(logits=x @ theta), obs=y)

    return program


def _fp(model, d=3):
    return program_fingerprint(bb.bind(model, np.zeros((2, d))))


def test_program_fingerprint_identifies_behaviour_not_objects():
    reference = _fp(logistic(prior_scale=2.0))
    assert len(reference) == 64 and int(reference, 16) >= 0
    assert _fp(logistic(prior_scale=2.0)) == reference
    assert _fp(_logistic_program) == _fp(_logistic_program)

    first, second = _make_logistic_program(2.0), _make_logistic_program(2.0)
    assert first is not second and bb.bind(first, np.zeros((2, 3))) is not bb.bind(second, np.zeros((2, 3)))
    assert _fp(first) == _fp(second)
    # Three different Python objects computing the same model: one fingerprint.
    assert _fp(_logistic_program) == _fp(first) == reference


def test_program_fingerprint_tells_programs_apart():
    fingerprints = {
        "logistic(2)": _fp(logistic(prior_scale=2.0)),
        "logistic(3)": _fp(logistic(prior_scale=3.0)),
        "poisson": _fp(poisson()),
        "logistic(2), d=4": _fp(logistic(prior_scale=2.0), d=4),
        "closure(3)": _fp(_make_logistic_program(3.0)),
    }
    assert fingerprints["closure(3)"] == fingerprints["logistic(3)"]
    del fingerprints["closure(3)"]
    assert len(set(fingerprints.values())) == len(fingerprints), fingerprints


def test_program_fingerprint_needs_x64():
    bound = bb.bind(logistic(prior_scale=2.0), np.zeros((2, 3)))
    previous = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", False)
    try:
        with pytest.raises(PrecisionError, match="64-bit"):
            program_fingerprint(bound)
    finally:
        jax.config.update("jax_enable_x64", previous)
