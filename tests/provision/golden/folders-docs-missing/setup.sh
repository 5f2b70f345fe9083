# docs_root not there yet: the shared folders wait for the next run.
