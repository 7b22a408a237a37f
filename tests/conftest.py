# The capture scripts run in each framework's own environment (tests/capture/README.md),
# not in the test suite's: pytest must not import them.
collect_ignore_glob = ["capture/*"]
