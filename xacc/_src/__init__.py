"""Private implementation packages of xacc (the public API re-exports from here)."""
