"""The public API keeps its own rules, checked over every public callable of every public module.

A public module is ``bayesbandit`` or any module below it whose dotted name has no part starting
with an underscore (the model zoo and the diagnostics included, as installed); its public names are
its ``__all__``. The experiments (``bayesbandit.experiments``) are the command line's, not an API,
and are left out. The rules:

1. **Hyper-parameters are keyword-only.** A parameter that has a default is a setting the caller may
   leave alone: it is keyword-only, unless it is data that a call may omit (:data:`OPTIONAL_DATA`:
   ``Agent(policy, arms)`` for a fixed arm set, ``laplace(model, x, y, w)`` with row weights, the path of a
   dataset). The wrapped object and the data stay positional. Records (NamedTuples), exceptions and
   protocols are not callables with hyper-parameters and are left out.
2. **The PRNG key comes first**, as in JAX, NumPyro and BlackJAX: a parameter named ``key`` or
   ``*_key`` is one of the leading parameters, or keyword-only where it is optional. The methods of the
   policy and environment contract (``select(state, arms, key)``, ``pull(env_state, action, key, t)``)
   are methods, not functions of a module, and keep the contract's order (``docs/contract.md``).
3. **One meaning per public name**: a name exported by two public modules is the same object in both.
4. **Every public subpackage is reachable the same way**: after ``import bayesbandit``, ``bayesbandit.X``
   is the subpackage ``X`` (loaded on first access where importing it eagerly would cost start-up).
5. **A breaking change is deliberate**: every public name and signature is in ``tests/public_api.txt``;
   a change to it fails here until the file is regenerated (``python tests/test_api_rules.py --update``)
   and the change is in CHANGELOG.md.
"""

from __future__ import annotations

import difflib
import enum
import importlib
import inspect
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from test_docs_reference import reference

SNAPSHOT = Path(__file__).with_name("public_api.txt")

OPTIONAL_DATA = frozenset({"arms", "y", "w", "path"})
"""Parameters that may be positional with a default: data a call may omit, never a setting."""

public_modules = reference.public_modules
"""Every public module, by dotted name: the API reference's own list (``docs/_ext/reference.py``)."""


def public_names() -> Iterator[tuple[str, str, Any]]:
    """``(module, name, object)`` for every name in every public module's ``__all__``."""
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        for name in module.__all__:
            yield module_name, name, getattr(module, name)


def _is_record(obj: Any) -> bool:
    """NamedTuples, exceptions, enums and protocols: no hyper-parameters to call them with."""
    return inspect.isclass(obj) and (
        issubclass(obj, tuple | BaseException | enum.Enum) or (Protocol in getattr(obj, "__mro__", ()))
    )


def callables() -> Iterator[tuple[str, inspect.Signature]]:
    """``(qualified name, signature)`` of every public function and class, each once, records left out."""
    seen = set()
    for module_name, name, obj in public_names():
        if inspect.ismodule(obj) or not callable(obj) or _is_record(obj) or id(obj) in seen:
            continue
        seen.add(id(obj))
        try:
            signature = inspect.signature(obj)
        except (TypeError, ValueError):  # a builtin without a signature
            continue
        yield f"{module_name}.{name}", signature


def positional(signature: inspect.Signature) -> list[inspect.Parameter]:
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p for p in signature.parameters.values() if p.kind in kinds]


Signatures = Iterable[tuple[str, inspect.Signature]]


def hyper_parameter_violations(signatures: Signatures) -> list[str]:
    return [
        f"{name}: '{p.name}' has a default and may be passed by position; make it keyword-only (after '*')"
        for name, signature in signatures
        for p in positional(signature)
        if p.default is not inspect.Parameter.empty and p.name not in OPTIONAL_DATA
    ]


def _is_key(parameter: inspect.Parameter) -> bool:
    return parameter.name == "key" or parameter.name.endswith("_key")


def key_violations(signatures: Signatures) -> list[str]:
    out = []
    for name, signature in signatures:
        params = positional(signature)
        leading = 0
        while leading < len(params) and _is_key(params[leading]):
            leading += 1
        out += [
            f"{name}: the key '{p.name}' comes after '{params[0].name}'; the key comes first"
            for p in params[leading:]
            if _is_key(p)
        ]
    return out


def twin_violations() -> list[str]:
    meanings: dict[str, dict[int, str]] = {}
    for module_name, name, obj in public_names():
        meanings.setdefault(name, {}).setdefault(id(obj), f"{module_name}.{name}")
    return [f"'{name}' means {len(m)} things: {sorted(m.values())}" for name, m in meanings.items() if len(m) > 1]


def _describe_default(value: Any) -> str:
    if value is None or isinstance(value, bool | int | float | str):
        return repr(value)
    if isinstance(value, tuple) and all(v is None or isinstance(v, bool | int | float | str) for v in value):
        return repr(value)
    return "..."


def _describe(signature: inspect.Signature) -> str:
    parts, star = [], False
    for p in signature.parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if p.kind is p.VAR_POSITIONAL:
            star = True
        prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        default = "" if p.default is p.empty else f"={_describe_default(p.default)}"
        parts.append(f"{prefix}{p.name}{default}")
    return f"({', '.join(parts)})"


def snapshot() -> str:
    """One line per public name: where it is exported, what it is and its signature (methods of classes too)."""
    lines = []
    for module_name, name, obj in public_names():
        where = f"{module_name}.{name}"
        if inspect.ismodule(obj):
            lines.append(f"{where}: module {obj.__name__}")
            continue
        if not callable(obj):
            lines.append(f"{where}: {type(obj).__name__}")
            continue
        kind = "class" if inspect.isclass(obj) else "function"
        try:
            lines.append(f"{where}: {kind}{_describe(inspect.signature(obj))}")
        except (TypeError, ValueError):
            lines.append(f"{where}: {kind}")
        if inspect.isclass(obj) and obj.__module__.startswith("bayesbandit"):
            for attr, member in inspect.getmembers(obj, inspect.isfunction):  # inherited methods too
                if attr.startswith("_"):
                    continue
                lines.append(f"{where}.{attr}: method{_describe(inspect.signature(member))}")
    return "\n".join(lines) + "\n"


def test_every_public_module_declares_its_names():
    missing = [m for m in public_modules() if not hasattr(importlib.import_module(m), "__all__")]
    assert not missing, f"public modules without __all__: {missing}"


def test_hyper_parameters_are_keyword_only():
    violations = hyper_parameter_violations(callables())
    assert not violations, "\n".join(violations)


def test_the_key_comes_first():
    violations = key_violations(callables())
    assert not violations, "\n".join(violations)


def test_each_public_name_means_one_thing():
    violations = twin_violations()
    assert not violations, "\n".join(violations)


def test_every_public_subpackage_is_reachable_after_import_bayesbandit():
    """In a fresh process: ``import bayesbandit`` then ``bayesbandit.X`` for every public subpackage and module."""
    children = sorted({m.split(".")[1] for m in public_modules() if m.count(".") >= 1} | {"experiments"})
    code = (
        "import importlib, sys, bayesbandit\n"
        f"for name in {children!r}:\n"
        "    assert getattr(bayesbandit, name) is importlib.import_module('bayesbandit.' + name), name\n"
        "    assert name in dir(bayesbandit), name\n"
        "print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "ok", done.stderr


def test_the_public_api_matches_its_snapshot():
    want = SNAPSHOT.read_text()
    got = snapshot()
    diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "public_api.txt", "now", n=0))
    assert got == want, (
        "The public API changed. If the change is deliberate, regenerate the snapshot with "
        "`python tests/test_api_rules.py --update` and record the change in CHANGELOG.md:\n" + diff
    )


def test_the_rules_catch_what_they_check():
    """A positional hyper-parameter and a key after the data, added on purpose, are each found."""

    def fn(model, a=1.0): ...

    def late(model, key): ...

    def fine(key, model, x, y, w=None, *, a=1.0): ...

    assert hyper_parameter_violations([("fn", inspect.signature(fn))]) == [
        "fn: 'a' has a default and may be passed by position; make it keyword-only (after '*')"
    ]
    assert key_violations([("late", inspect.signature(late))]) == [
        "late: the key 'key' comes after 'model'; the key comes first"
    ]
    assert not hyper_parameter_violations([("fine", inspect.signature(fine))])
    assert not key_violations([("fine", inspect.signature(fine))])


if __name__ == "__main__":
    if sys.argv[1:] == ["--update"]:
        SNAPSHOT.write_text(snapshot())
        print(f"wrote {SNAPSHOT}")
    else:
        sys.exit("usage: python tests/test_api_rules.py --update")
