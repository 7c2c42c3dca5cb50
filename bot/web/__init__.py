"""The admin web page: server-rendered pages over the same services as chat (issue 32).

``app`` builds the Starlette application, ``routes`` holds the pages, ``sessions`` the signed
session cookie and the sign-in rate limit, ``csrf`` the form tokens, ``templates`` the Jinja2
environment (autoescaped). It calls services only, never a store.
"""
