"""The core: outside tools behind one module each (git, YAML, JSON schemas, the detectors), files,
locks, the clock, errors and the registry where domains declare what validate and init need.
Imports nothing else of loa_mem."""
