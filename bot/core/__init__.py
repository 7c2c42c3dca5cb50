"""The platform-neutral core: rules, outbound messages and the service adapters call.

Nothing under this package imports discord or slack; adapters translate platform events into
calls on :class:`bot.core.service.StudyService` and render its :class:`bot.core.messages.Message`.
"""
