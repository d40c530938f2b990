"""Benchmarks on real data: LoCoMo retrieval through the store (:mod:`memlab.eval.locomo`) and
the gate on STS Benchmark pairs (``memlab eval gate``)."""
