"""`xacc.debug`: find where a captured program's results go wrong.

    report = xacc.debug.compare(fn, x, y)   # plain Python vs ATen executor vs xpu0
    print(report)                           # per output max abs/rel diff, first divergent node
"""

from __future__ import annotations

from xacc._src.debug.compare import (CompareReport, Diff, GraphComparison, NodeDivergence, PathResult, compare,
                                     compare_graph)

__all__ = ["compare", "compare_graph", "CompareReport", "PathResult", "GraphComparison", "NodeDivergence", "Diff"]
