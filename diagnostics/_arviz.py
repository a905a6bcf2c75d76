"""ArviZ, imported without its refactor notice.

ArviZ 0.22 and later warn once a day at import (a ``FutureWarning`` beginning "ArviZ is undergoing
a major refactor") unless the ``arviz_base``, ``arviz_stats`` and ``arviz_plots`` packages are
installed. The notice is about ArviZ's own future API, not about anything a bayesbandit user does,
and it appeared in the middle of the CLI's output; every diagnostics module imports ArviZ from here,
with that one warning filtered and every other warning left as it is.
"""

import warnings

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message=r"\s*ArviZ is undergoing a major refactor", category=FutureWarning)
    import arviz as az

__all__ = ["az"]
