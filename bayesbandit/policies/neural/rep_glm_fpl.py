"""repGLM-FPL: GLM-FPL on the frozen embedding of a network trained on uniform pulls (Kveton et al. 2020, Section 5.2)."""

from __future__ import annotations

from typing import ClassVar

from bayesbandit.contract import register_policy
from bayesbandit.policies.glm import GLMFPL
from bayesbandit.policies.neural._neural_linear import NeuralLinear, NeuralLinearInfo

__all__ = ["RepGLMFPL", "RepGLMFPLInfo"]


class RepGLMFPLInfo(NeuralLinearInfo):
    """What :class:`RepGLMFPL`'s ``select`` reports.

    ``exploring``: a uniform pull while the network trains; ``converged``: the perturbed GLM-FPL head's selection converged
    (true while exploring).
    """

    __slots__ = ()


@register_policy(data_fields=["a", "learning_rate"])
class RepGLMFPL(NeuralLinear):
    """The paper's neural-linear baseline: ``m`` uniform pulls train the network, then GLM-FPL on ``[h(x), 1]``.

    After round ``m`` the head is :class:`bayesbandit.GLMFPL` with perturbation scale ``a``
    on the embedded history (eq. 6 of the paper, over the 51-dimensional features of a
    50-unit network), the network frozen (see ``bayesbandit.policies.neural._neural_linear``).
    The paper gives neither ``a`` for this stage nor a grid for ``m`` (``1%`` to ``20%`` of
    ``n``); ``a = 0.5`` is its practical GLM-FPL value, with the paper's constant reward noise
    (``GLMFPL(noise="paper")``).

    Parameters
    ----------
    model : NumPyro program
        The network, e.g. :func:`bayesbandit.models.mlp`, recording its hidden activations as
        a deterministic site.
    explore_rounds, a, head_model, embedding_site, learning_rate, optimizer, batch, dtype, obs_site
        See :class:`~bayesbandit.policies.neural.NeuralLinear`.

    Examples
    --------
    >>> import jax
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import mlp
    >>> bb.runtime.enable_x64()
    >>> policy = bb.RepGLMFPL(mlp(hidden=8), explore_rounds=20, a=0.5)
    >>> state = policy.init(d=4, capacity=100, key=jax.random.PRNGKey(0))
    >>> state.head.history.x.shape  # the head's rows: 8 hidden units and a bias
    (100, 9)
    """

    info_type: ClassVar[type[NeuralLinearInfo]] = RepGLMFPLInfo

    def __post_init__(self) -> None:
        self._check_neural_linear()

    def head(self) -> GLMFPL:
        """GLM-FPL with scale ``a`` on the embedding, no initial exploration of its own."""
        return GLMFPL(self.head_program(), a=self.a, noise="paper", num_explore=0)
