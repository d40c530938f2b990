"""Simulation harness: workloads of an agent's memory traffic, forgetting policies, simulators,
sweeps.

Examples
--------
>>> from memlab.sim import Workload, Policy, simulate
>>> w = Workload.generate(seed=0, n_days=5)
>>> simulate(w, Policy("lru", max_memories=50)).summary()["hit_rate"] <= 1.0
True
"""

from memlab.sim.access_log import simulate_access_log
from memlab.sim.policies import MODELS, SCORERS, MemoryState, Policy, Scorer
from memlab.sim.runner import Sweep, confidence_table, quick_comparison, run_sweep, t_interval
from memlab.sim.simulator import SimResult, simulate
from memlab.sim.store_sim import simulate_store
from memlab.sim.workload import Workload, WorkloadConfig

__all__ = [
    "MODELS",
    "MemoryState",
    "Policy",
    "SCORERS",
    "Scorer",
    "SimResult",
    "Sweep",
    "Workload",
    "WorkloadConfig",
    "confidence_table",
    "quick_comparison",
    "run_sweep",
    "simulate",
    "simulate_access_log",
    "simulate_store",
    "t_interval",
]
