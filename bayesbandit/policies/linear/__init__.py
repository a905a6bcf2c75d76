"""Linear policies on ridge-regression statistics: LinTS and LinUCB."""

from bayesbandit.policies.linear._ridge import RidgePolicy, RidgeState, RidgeUpdateInfo
from bayesbandit.policies.linear.lin_ts import LinTS, LinTSInfo
from bayesbandit.policies.linear.lin_ucb import LinUCB, LinUCBInfo

__all__ = ["RidgePolicy", "RidgeState", "RidgeUpdateInfo", "LinTS", "LinTSInfo", "LinUCB", "LinUCBInfo"]
