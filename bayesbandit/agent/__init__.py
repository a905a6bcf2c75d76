"""The stateful agent over any policy (:class:`Agent`): validation, keys, compiled calls, checkpoints.

One job a module: ``._agent`` the public class (validation, keys, failure handling), ``._engine`` the compiled
calls (compiled ahead), ``._explore`` the initial exploration, ``._decisions`` the pending decisions, ``._log`` the
SQLite decision log, ``._persist`` the checkpoint schema, ``._health`` the posterior checks (:class:`AgentHealth`).
"""

from bayesbandit.agent._agent import Agent
from bayesbandit.agent._decisions import Decision
from bayesbandit.agent._health import AgentHealth
from bayesbandit.agent._log import DecisionLog, log_files, read_log

__all__ = ["Agent", "AgentHealth", "Decision", "DecisionLog", "log_files", "read_log"]
