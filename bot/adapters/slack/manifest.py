"""What the Slack app must declare for this adapter: the ids it listens on and the scopes it needs.

``deploy/slack-manifest.yaml`` is the operator's copy; a test loads it and checks it against the
constants here, so a new Web API call or listener cannot ship without its scope or declaration.
"""

from __future__ import annotations

__all__ = [
    "ANSWER_MODAL_CALLBACK",
    "BOT_EVENTS",
    "BOT_SCOPES",
    "METHOD_SCOPES",
    "PACK_SHORTCUT_CALLBACK",
    "RUN_MODAL_CALLBACK",
    "RUN_SHORTCUT_CALLBACK",
    "SLASH_COMMAND",
    "SOLVE_MODAL_CALLBACK",
]

SLASH_COMMAND = "/study"
RUN_SHORTCUT_CALLBACK = "studybot_run_message"
"""The message shortcut "Run code block" (runs the first fenced code block of a message)."""
RUN_MODAL_CALLBACK = "studybot_run"
SOLVE_MODAL_CALLBACK = "studybot_solve"
ANSWER_MODAL_CALLBACK = "studybot_answer"
"""A typed question's Answer modal (one line: the answer, graded before the modal closes)."""
"""The ``/study run`` modal."""
WRITE_MODAL_CALLBACK = "studybot_write"
"""The ``/study write`` modal (a question for the group's ``community`` pack)."""
PACK_SHORTCUT_CALLBACK = "studybot_check_pack"
"""The message shortcut "Check question pack" (lints the message's .yaml file; admins install)."""

BOT_EVENTS = ("app_home_opened",)

METHOD_SCOPES: dict[str, str | None] = {
    # Every Web API method the adapter calls with the bot token, and the bot scope it needs
    # (None: no scope). `chat.postMessage` also uses `chat:write.public` so that `/study quiz`
    # works in public channels the bot was not invited to.
    "auth.test": None,
    "chat.postMessage": "chat:write",
    "chat.update": "chat:write",
    "chat.postEphemeral": "chat:write",
    "views.open": None,
    "views.publish": None,
    "users.info": "users:read",
    "usergroups.users.list": "usergroups:read",
    # Role rewards (/study rewards): find the user group, then set its members.
    "usergroups.list": "usergroups:read",
    "usergroups.users.update": "usergroups:write",
    "files.getUploadURLExternal": "files:write",
    "files.completeUploadExternal": "files:write",
    # A pack file attached to a message: its metadata, and (with the same scope) its bytes
    # from url_private_download.
    "files.info": "files:read",
    # The member's DM with the app: review reminders, and the /study stats picture (a private
    # reply cannot carry a file).
    "conversations.open": "im:write",
    # Called with the app-level token (its scope, connections:write, is set on the token).
    "apps.connections.open": None,
}

BOT_SCOPES = (
    "commands",
    "chat:write",
    "chat:write.public",
    "users:read",
    "usergroups:read",
    "usergroups:write",
    "files:write",
    "files:read",
    "im:write",
)
"""The bot token scopes, exactly: ``commands`` for /study and the shortcut, the rest per method."""
