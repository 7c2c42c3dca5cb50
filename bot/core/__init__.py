"""The platform-neutral core: models, rules and outbound messages, without I/O.

Nothing under this package imports discord or slack, nor storage or the services: the services
(:mod:`bot.services`) call it, and adapters render its :class:`bot.core.messages.Message`.
"""
