"""xjit: run an unmodified PyTorch script with XJIT capture.

    python -m xjit [--device cpu|xpu0] [--backend NAME] [--explain] [--fullgraph] script.py [args...]

Module-level code runs normally; every function it calls is eligible for
capture. Device code is erased to the chosen device. A summary is printed to
stderr at exit."""
