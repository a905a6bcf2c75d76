"""Package discovery: ``bayesbandit`` and every package below it, with the top-level folders that
install as its subpackages (``[tool.setuptools] package-dir`` in ``pyproject.toml``).

Everything else about the build is in ``pyproject.toml``; this file exists because setuptools' ``find``
directive cannot map ``models/`` to ``bayesbandit.models``: a package is found here, never listed.
"""

import tomllib
from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).parent
PACKAGE_DIR: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]


def discover() -> list[str]:
    """Every package under each folder of ``package-dir``, by its installed dotted name."""
    packages = []
    for name, folder in PACKAGE_DIR.items():
        packages.append(name)
        packages += [f"{name}.{sub}" for sub in find_packages(str(ROOT / folder))]
    return sorted(packages)


setup(packages=discover())
