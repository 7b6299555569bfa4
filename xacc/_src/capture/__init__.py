"""XJIT capture, the Python half: the bytecode translator (symbolic execution of
CPython 3.11 code objects with value trackers), meta-tensor recording of torch
calls as ATen nodes, bytecode generation for graph breaks and resume functions,
and the compile callback the C++ frame hook calls on a cache miss.

The hook, caches, guard trees and the ATen executor are C++ (xacc._C.capture).
"""
