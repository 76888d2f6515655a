"""`pyhpa reconcile`: one pass of the controller over a snapshot of files, on the in-memory cluster."""
