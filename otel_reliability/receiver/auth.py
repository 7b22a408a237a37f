"""The bearer token both servers ask for: one check, so that HTTP and gRPC agree on every header.

RFC 9110 makes the scheme name case-insensitive (``bearer``, ``Bearer``, ``BEARER``); the
token itself is compared exactly, in constant time. A header that is not ASCII cannot hold
the token (it is ASCII, as a header value must be) and is a refusal, never an error.

>>> check = BearerToken("s3cret")
>>> check.allows("bearer s3cret"), check.allows("Bearer nope"), check.allows("Bearer s3crét")
(True, False, False)
"""

from __future__ import annotations

import hmac


class BearerToken:
    """Checks ``Authorization`` values against one token."""

    def __init__(self, token: str) -> None:
        self._token = token.encode("utf-8")

    def allows(self, authorization: str | None) -> bool:
        """True when ``authorization`` is ``Bearer <the token>``, the scheme in any case."""
        scheme, _, given = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer":
            return False
        try:
            candidate = given.strip().encode("ascii")
        except UnicodeEncodeError:  # aiohttp and grpcio hand on non-ASCII bytes as they came
            return False
        return hmac.compare_digest(candidate, self._token)
