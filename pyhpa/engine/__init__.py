"""The pure HPA algorithm: no I/O, the clock passed in."""
