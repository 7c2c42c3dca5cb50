"""The session cookie: a random token, signed with the page's secret, checked in the database.

The signature lets a forged or mangled cookie be refused without a query; the database decides
whether the session is still live (not expired, not signed out), so it can be revoked. Cookies
are HttpOnly and SameSite=Lax, and Secure whenever the page is served over https.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections import deque
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import Response

from bot.services.bundle import Services
from bot.services.web_access import SESSION_LIFETIME, AdminSession

__all__ = ["COOKIE", "SignInLimiter", "clear_cookie", "current", "session_token", "set_cookie"]

COOKIE = "studybot_session"


def _signature(secret: bytes, token: str) -> str:
    digest = hmac.new(secret, token.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def set_cookie(response: Response, request: Request, secret: bytes, token: str) -> None:
    response.set_cookie(
        COOKIE,
        f"{token}.{_signature(secret, token)}",
        max_age=int(SESSION_LIFETIME.total_seconds()),
        path="/",
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )


def clear_cookie(response: Response, request: Request) -> None:
    response.delete_cookie(
        COOKIE, path="/", httponly=True, samesite="lax", secure=request.url.scheme == "https"
    )


def session_token(request: Request, secret: bytes) -> str | None:
    """The session token of a correctly signed cookie, else None."""
    value = request.cookies.get(COOKIE, "")
    token, _, signature = value.rpartition(".")
    if not token or not hmac.compare_digest(signature, _signature(secret, token)):
        return None
    return token


async def current(request: Request, services: Services, secret: bytes) -> AdminSession | None:
    """The live session of this request, or None."""
    token = session_token(request, secret)
    return None if token is None else await services.web.session(token)


class SignInLimiter:
    """At most ``limit`` sign-in attempts per client address in any ``per`` seconds.

    In memory: a guess at a link's token would need 2**256 tries anyway; this keeps a script
    from hammering the database and the log.
    """

    def __init__(
        self, limit: int = 10, per: float = 600.0, now: Callable[[], float] = time.monotonic
    ) -> None:
        self._limit = limit
        self._per = per
        self._now = now
        self._seen: dict[str, deque[float]] = {}

    def allow(self, client: str) -> bool:
        now = self._now()
        seen = self._seen.setdefault(client, deque())
        while seen and seen[0] <= now - self._per:
            seen.popleft()
        if len(seen) >= self._limit:
            return False
        seen.append(now)
        if len(self._seen) > 10_000:  # forget the quiet ones
            for key in [k for k, v in self._seen.items() if not v]:
                del self._seen[key]
        return True
