"""Form tokens: every form carries one, and a POST without the right one changes nothing (403).

A signed-in session has its own random token (kept with the session in the database). The
sign-in form, before there is a session, uses a double-submit token: a random value in an
HttpOnly, SameSite=Lax cookie that the form must repeat.
"""

from __future__ import annotations

import hmac
import secrets

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

__all__ = ["FIELD", "SIGNIN_COOKIE", "remember_signin", "signin_token", "valid", "valid_signin"]

FIELD = "csrf"
SIGNIN_COOKIE = "studybot_signin"


def valid(form: FormData, expected: str) -> bool:
    """Whether the form repeats ``expected`` (compared in constant time)."""
    given = form.get(FIELD)
    return bool(expected) and isinstance(given, str) and hmac.compare_digest(given, expected)


def signin_token(request: Request) -> str:
    """The sign-in form's token: the one in this browser's cookie, or a new one."""
    token = request.cookies.get(SIGNIN_COOKIE)
    if not token or len(token) > 100:
        token = secrets.token_urlsafe(32)
    return token


def remember_signin(response: Response, request: Request, token: str) -> None:
    """Set the sign-in form's token on the browser (the form must repeat it)."""
    response.set_cookie(
        SIGNIN_COOKIE,
        token,
        max_age=900,
        path="/signin",
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )


def valid_signin(request: Request, form: FormData) -> bool:
    return valid(form, request.cookies.get(SIGNIN_COOKIE, ""))
