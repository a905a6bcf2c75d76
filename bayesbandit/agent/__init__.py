"""The stateful agent over any policy (:class:`Agent`): validation, keys, compiled calls, checkpoints.

One job a module: :mod:`._agent` the public class (validation, keys, failure handling),
:mod:`._calls` the compiled-call cache and compiling ahead, :mod:`._decisions` the pending decisions,
:mod:`._log` the SQLite decision log, :mod:`._persist` the checkpoint schema.
"""

from bayesbandit.agent._agent import Agent
from bayesbandit.agent._decisions import Decision
from bayesbandit.agent._log import DecisionLog, read_log

__all__ = ["Agent", "Decision", "DecisionLog", "read_log"]
