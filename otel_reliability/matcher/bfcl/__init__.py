"""BFCL's AST checking of function calls (SPEC §9), pure: the matcher's ``bfcl`` argument mode
uses it, and ``otel_reliability.bfcl`` (datasets, scoring, reports) is built on it."""
