"""Sphinx configuration: the bayesbandit site (MyST pages, executed MyST notebooks, the API reference).

Built offline with warnings as errors: ``python -m sphinx -W -b html docs docs/_build/html``.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import bayesbandit  # noqa: E402

project = "bayesbandit"
author = "the bayesbandit authors"
copyright = "the bayesbandit authors"
release = version = bayesbandit.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "reference",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
# results/likelihoods/likelihoods.md has no title of its own: results/likelihoods.md includes it under one
exclude_patterns = [
    "_build",
    "results/*/cells",
    "**.ipynb_checkpoints",
    "_ext",
    "_templates",
    "results/likelihoods/likelihoods.md",
]
templates_path = ["_templates"]

# Every reference must resolve. Python's standard library and the third-party packages (JAX, NumPy,
# ...) have no inventory offline (the build reads no intersphinx inventory), so references into them
# are not checked.
_UNLINKED_PACKAGES = sorted(
    {*sys.stdlib_module_names, "jax", "jaxlib", "jnp", "np", "numpy", "numpyro", "optax", "scipy", "xarray", "xr"}
    | {"pandas", "pd", "arviz", "az", "matplotlib", "annoy", "hnswlib", "sklearn"}
)
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", rf"({'|'.join(_UNLINKED_PACKAGES)})\..+"),
    # A signature's annotation naming a private class (``bayesbandit._gaussian_linear.HostRidge``) has no
    # page to link to: the reference documents public names only.
    (r"py:class", r"bayesbandit(\.\w+)*\._\w+(\.\w+)*"),
    # Annotations of a signature that names something imported only for type checking stay as written
    # (postponed evaluation fails): bayesbandit._typing's aliases of JAX types, numpyro's Distribution,
    # the private DesignInverse.
    (r"py:class", r"Array|ArrayLike|PRNGKey|PyTree|Model|Distribution|DesignInverse"),
    # numpyro's Distribution.log_prob docstring, which EnumeratedMarginal.log_prob inherits, names
    # numpyro's own method.
    (r"py:meth", r"sample_with_intermediates"),
]

# API reference
autosummary_generate = True
autosummary_generate_overwrite = True
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
napoleon_google_docstring = False
napoleon_numpy_docstring = True
# "Attributes" sections render like "Parameters" (a field list of the class), not as attribute entries
# that autodoc's members would repeat, and their types stay prose too.
napoleon_custom_sections = [("Attributes", "params_style")]
# Parameter and return types are numpydoc prose ("float array, shape (n, d), optional"): rendered as
# text, not split into class references; a type written as a role (:class:`Agent`) still links.
napoleon_use_param = False
napoleon_use_rtype = False

# MyST and notebooks: every tutorial runs on every build; a failing cell fails the build.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3
nb_execution_mode = "force"
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

html_theme = "furo"
html_title = f"bayesbandit {release}"


def _benchmark_pages() -> None:
    """One page per committed benchmark report (``benchmarks/results/*.md``), including it as it is."""
    out = HERE / "benchmarks" / "generated"
    out.mkdir(parents=True, exist_ok=True)
    reports = sorted((HERE.parent / "benchmarks" / "results").glob("*.md"))
    for stale in set(out.glob("*.md")) - {out / report.name for report in reports}:
        stale.unlink()
    for report in reports:
        page = out / report.name
        text = f"```{{include}} ../../../benchmarks/results/{report.name}\n```\n"
        if not page.exists() or page.read_text() != text:
            page.write_text(text)


_benchmark_pages()


def _collapsed_navigation(app, pagename, templatename, context, doctree) -> None:
    """The sidebar shows the open page's branch of the tree, not every one of the reference's pages.

    furo renders the whole expanded tree on each page; with a page per public name that costs
    seconds a page. Run before furo's handler, this makes its tree the collapsed one.
    """
    if "toctree" in context:
        toctree = context["toctree"]
        context["toctree"] = lambda **kwargs: toctree(**{**kwargs, "collapse": True})


def setup(app):
    app.connect("html-page-context", _collapsed_navigation, priority=400)
