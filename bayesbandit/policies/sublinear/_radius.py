"""The confidence radius of the index-backed linear bandits (Yang et al.), for ridge 1."""

from __future__ import annotations

import math

__all__ = ["confidence_radius"]


def confidence_radius(d: int, horizon: int, delta: float) -> float:
    """``beta(delta) = 1 + sqrt(2 log(1/delta) + d log(1 + T/d))`` (Abbasi-Yadkori et al. 2011, Thm. 2).

    The radius of Yang et al. (sec. 5, Lemma B.2) for ``||theta* || <= 1`` and 1-sub-Gaussian noise.
    Sub-Elim uses ``beta(delta / 2)``, Sub-TS ``beta(delta / (4 T))`` (Alg. 3 line 3, Alg. 4 line 2).

    >>> round(confidence_radius(16, 20_000, 0.05), 2)
    11.96
    """
    return 1.0 + math.sqrt(2.0 * math.log(1.0 / delta) + d * math.log(1.0 + horizon / d))
