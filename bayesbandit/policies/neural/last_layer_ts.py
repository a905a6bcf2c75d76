"""Last-layer Laplace Thompson sampling: GLM-TSL on the frozen embedding of a trained network."""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import ClassVar

from bayesbandit.contract import register_policy
from bayesbandit.policies.glm import GLMTSL
from bayesbandit.policies.neural._neural_linear import NeuralLinear, NeuralLinearInfo

__all__ = ["LastLayerLaplaceTS", "LastLayerLaplaceTSInfo"]


class LastLayerLaplaceTSInfo(NeuralLinearInfo):
    """What :class:`LastLayerLaplaceTS`'s ``select`` reports.

    ``exploring``: a uniform pull while the network trains; ``converged``: the Laplace Thompson-sampling head's selection converged
    (true while exploring).
    """

    __slots__ = ()


@register_policy(data_fields=["a", "learning_rate"])
class LastLayerLaplaceTS(NeuralLinear):
    """Thompson sampling from the Laplace approximation of the output layer's posterior, given the embedding.

    The neural analogue of GLM-TSL (Kveton et al. 2020, eqs. 4-5): ``m`` uniform pulls train
    the network; then, the network frozen, the output layer ``(w_2, b_2)`` is a GLM on
    ``[h(x), 1]`` whose posterior given the whole history is approximated by
    ``N(bar theta_t, a^2 H_t^{-1})`` (:class:`bayesbandit.GLMTSL`), sampled once a round. It is
    not in the paper; it shares :class:`RepGLMFPL`'s schedule so the two differ only in how
    the head explores. How close that Gaussian is to the exact last-layer posterior is what
    ``bayesbandit.diagnostics.compare(policy.head_program(), *policy.head_rows(state))`` shows.

    Parameters
    ----------
    model : NumPyro program
        The network, e.g. :func:`bayesbandit.models.mlp`.
    a : float, >= 0
        Scale of the sampled covariance (1: the Laplace posterior itself).
    explore_rounds, head_model, embedding_site, learning_rate, optimizer, batch, dtype, obs_site
        See :class:`~bayesbandit.policies.neural.NeuralLinear`.

    Examples
    --------
    >>> import jax
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import mlp
    >>> bb.runtime.enable_x64()
    >>> policy = bb.LastLayerLaplaceTS(mlp(hidden=8), explore_rounds=20)
    >>> policy.head().a
    1.0
    """

    info_type: ClassVar[type[NeuralLinearInfo]] = LastLayerLaplaceTSInfo

    _: KW_ONLY
    a: float = 1.0

    def __post_init__(self) -> None:
        self._check_neural_linear()

    def head(self) -> GLMTSL:
        """GLM-TSL with scale ``a`` on the embedding, no initial exploration of its own."""
        return GLMTSL(self.head_program(), a=self.a, num_explore=0)
