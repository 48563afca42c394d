"""The benchmarks, each a script (``python benchmarks/startup.py``): a package so that mypy names them
``benchmarks.NAME``."""
