"""toolwire's benchmarks; run each entry point from the repository's root as `python -m bench.FOLDER.NAME`."""
