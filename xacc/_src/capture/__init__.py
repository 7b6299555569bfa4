"""XJIT capture, the Python half: the glue around the C++ bytecode translator
(csrc/lib/capture/translate): the compile callback the frame hook calls on a
cache miss (convert.py), the host the translator calls back to observe torch
calls on meta tensors (host.py, host_state.py, recorder.py, scalars.py), dynamic-shape
history (dynamic.py), the graph-break table (breaks.py) and configuration.

The hook, caches, guard trees, translator and ATen executor are C++
(xacc._C.capture).
"""
