# The capture scripts and the live framework tests run in each framework's own environment
# (tests/capture/README.md, tests/test_live_frameworks.py), not in the test suite's: pytest
# must not import them.
collect_ignore_glob = ["capture/*", "live/*"]
