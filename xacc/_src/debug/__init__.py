"""Debugging captured programs: executors over GIR text and the three-way
comparison behind `xacc.debug.compare`."""
