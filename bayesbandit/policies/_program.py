"""What every policy whose reward model is a NumPyro program shares: the bound program and its support."""

from __future__ import annotations

from typing import Any

from bayesbandit.contract import RewardSupport
from bayesbandit.inference.potential import BoundModel, bound_for

__all__ = ["ProgramPolicy"]


class ProgramPolicy:
    """Mixin for policy dataclasses with the fields ``model`` (a program) and ``obs_site``."""

    model: Any
    obs_site: str

    def bound(self, d: int) -> BoundModel:
        """The reward program bound to ``d``-dimensional features."""
        return bound_for(self.model, (d,), obs_site=self.obs_site)

    def reward_support(self, d: int) -> RewardSupport:
        """The observed site's support, for validating rewards."""
        bound = self.bound(d)
        return RewardSupport(bound.support, bound.support_name)
