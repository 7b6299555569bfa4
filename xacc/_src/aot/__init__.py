"""Ahead-of-time artifacts and the cross-process compile cache (docs/aot.md):
artifact.py (the container), codec.py (portable entries), store.py (recording
and installing cache entries), api.py (xacc.aot, xacc.load, xjit --cache)."""
