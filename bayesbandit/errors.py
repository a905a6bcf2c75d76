"""Exceptions raised by bayesbandit.

Every exception derives from :class:`BayesBanditError`, and each also subclasses the builtin a
caller would naturally catch (``ValueError`` for bad input, ``RuntimeError`` for a numerical
failure), as scikit-learn's ``NotFittedError`` does. The one warning class,
:class:`PosteriorQualityWarning`, is a ``UserWarning``.
"""

from __future__ import annotations

__all__ = [
    "BayesBanditError",
    "InvalidInput",
    "UnknownArm",
    "UnknownDecision",
    "ExpiredDecision",
    "DecisionAlreadyRewarded",
    "ModelSpecError",
    "NotConverged",
    "CheckpointError",
    "PrecisionError",
    "ConfigurationError",
    "ProcessError",
    "IncompleteGrid",
    "PosteriorQualityWarning",
]


class BayesBanditError(Exception):
    """Base class of every bayesbandit exception."""


class InvalidInput(BayesBanditError, ValueError):
    """A value passed to a public function is malformed: wrong shape, non-finite, out of support.

    Raised before any state changes, so the caller's agent or history is left as it was.
    """


class UnknownArm(InvalidInput, LookupError):
    """An arm id that the index, catalogue or agent does not hold (never added, or removed)."""


class UnknownDecision(InvalidInput, LookupError):
    """A decision id that the agent never made, or no longer remembers."""


class ExpiredDecision(UnknownDecision):
    """A decision that expired before its reward arrived (the agent's ``max_pending`` or ``max_age``)."""


class DecisionAlreadyRewarded(InvalidInput):
    """A second reward for a decision: each decision takes one."""


class ModelSpecError(BayesBanditError, ValueError):
    """A NumPyro program breaks the reward-model contract (see :func:`bayesbandit.bind`)."""


class NotConverged(BayesBanditError, RuntimeError):
    """A numerical routine (Newton's method, a Cholesky factorisation) did not converge."""


class CheckpointError(BayesBanditError, ValueError):
    """A saved agent cannot be read: missing, truncated, or written by an unknown format."""


class PrecisionError(BayesBanditError, RuntimeError):
    """A routine that needs float64 was called with JAX's 64-bit mode off.

    bayesbandit never changes JAX's global settings; call :func:`bayesbandit.runtime.enable_x64` (or set
    ``JAX_ENABLE_X64=1``) before creating arrays.
    """


class ConfigurationError(BayesBanditError, RuntimeError):
    """A process-wide setting requested too late: JAX's backend already runs with the old one.

    Such settings (:func:`bayesbandit.runtime.enable_low_latency`) are read when JAX creates its CPU
    backend, at the first computation of the process; call them before it.
    """


class ProcessError(BayesBanditError, RuntimeError):
    """An agent used outside the process that made it: in a child made by ``os.fork()`` (JAX's
    threads are not copied, so its next computation would never return), or sent to another
    process by pickling (it holds compiled functions). Save it and load it in the other process,
    which is started with the ``spawn`` or ``forkserver`` method."""


class IncompleteGrid(BayesBanditError, RuntimeError):
    """Parts of an experiment grid are neither stored nor computed here, so its results cannot be written.

    Raised after a shard (``--shard K/N``) stored its own parts while others are still missing, and
    by a merge that lacks some. ``missing`` lists them (:class:`bayesbandit.scale.Part`).
    """

    def __init__(self, message: str, missing: tuple = ()) -> None:
        super().__init__(message)
        self.missing = missing


class PosteriorQualityWarning(UserWarning):
    """The Laplace posterior a policy samples from is far from the exact posterior of its program.

    Emitted by :class:`~bayesbandit.Agent`'s posterior checks (:meth:`bayesbandit.Agent.health`)
    when the Pareto ``k_hat`` of importance sampling the exact posterior with the Laplace draws
    exceeds 0.7 (:func:`bayesbandit.inference.laplace_psis`; Yao et al. 2018), once each time it
    crosses 0.7 from below, not at every check. It is a warning, not an error: the agent goes on
    serving. It is emitted on the agent's check thread, not in a request: route it to a service's
    logs with ``logging.captureWarnings(True)``, and read the latest grade with ``agent.health()``.
    """
