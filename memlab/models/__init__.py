"""Pure, vectorised numpy models of memory: no I/O, no plotting, no store.

``memlab.models`` imports nothing from the rest of memlab.
"""
