"""Inbound Slack requests for tests: payload builders and request signing.

A :class:`SlackRequest` is one thing Slack would send to the app (a slash command, an
interactivity payload, an Events API callback). The same object can be delivered three ways:

* HTTP: :meth:`SlackRequest.http_body` is the exact body Slack POSTs (form fields for slash
  commands, ``payload=<json>`` for interactivity, JSON for events) and :meth:`SlackRequest.signed`
  adds ``X-Slack-Signature`` / ``X-Slack-Request-Timestamp``;
* Socket Mode: :attr:`SlackRequest.envelope_type` and :attr:`SlackRequest.payload` are what goes
  into the websocket envelope (Slack sends the *parsed* payload there: a dict of strings for slash
  commands, the interactivity JSON object, the event callback object).

The builders live on :class:`SlackRequestBuilder`, which :class:`~tests.fakes.slack_api.FakeSlack`
extends so that response URLs and trigger ids point at (and are checked by) the running fake, and
so that a click on a message the app posted carries that message's real blocks.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlencode

__all__ = [
    "FORM_CONTENT_TYPE",
    "JSON_CONTENT_TYPE",
    "EnvelopeType",
    "SlackRequest",
    "SlackRequestBuilder",
    "sign",
    "signed_http_request",
]

EnvelopeType = Literal["slash_commands", "interactive", "events_api"]

FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"
JSON_CONTENT_TYPE = "application/json"

#: Element types whose interaction payload carries ``selected_option`` rather than ``value``.
_SELECT_TYPES = frozenset({"static_select", "external_select", "radio_buttons", "overflow"})


def sign(body: str | bytes, signing_secret: str, timestamp: int | str) -> str:
    """Return Slack's ``v0=`` signature of ``body`` (HMAC-SHA256 of ``v0:{ts}:{body}``).

    Written independently of ``slack_sdk.signature`` so that the contract tests really check
    that the two agree.
    """
    raw = body if isinstance(body, bytes) else body.encode()
    base = b"v0:" + str(timestamp).encode() + b":" + raw
    return "v0=" + hmac.new(signing_secret.encode(), base, hashlib.sha256).hexdigest()


def signed_http_request(
    body: str,
    signing_secret: str,
    timestamp: int | None = None,
    *,
    valid: bool = True,
    content_type: str = FORM_CONTENT_TYPE,
) -> tuple[dict[str, str], str]:
    """Headers and body of a request as Slack would sign it.

    ``valid=False`` signs with a different secret (the app must answer 401). A ``timestamp`` more
    than five minutes from now is rejected by the verifier as a replay, even when correctly signed.
    """
    ts = int(time.time()) if timestamp is None else timestamp
    secret = signing_secret if valid else signing_secret + "-but-not-the-right-one"
    headers = {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": str(ts),
        "X-Slack-Signature": sign(body, secret, ts),
    }
    return headers, body


@dataclass(frozen=True)
class SlackRequest:
    """One inbound request, deliverable over HTTP or Socket Mode."""

    envelope_type: EnvelopeType
    payload: dict[str, Any]

    @property
    def content_type(self) -> str:
        return JSON_CONTENT_TYPE if self.envelope_type == "events_api" else FORM_CONTENT_TYPE

    def http_body(self) -> str:
        """The body Slack would POST to ``/slack/events``."""
        if self.envelope_type == "events_api":
            return json.dumps(self.payload)
        if self.envelope_type == "interactive":
            return urlencode({"payload": json.dumps(self.payload)})
        return urlencode(self.payload)

    def signed(
        self, signing_secret: str, *, timestamp: int | None = None, valid: bool = True
    ) -> tuple[dict[str, str], str]:
        """``(headers, body)`` ready to POST or to wrap in an ``AsyncBoltRequest``."""
        return signed_http_request(
            self.http_body(),
            signing_secret,
            timestamp,
            valid=valid,
            content_type=self.content_type,
        )

    @property
    def type(self) -> str:
        """``block_actions``, ``view_submission``, ``message_action``, ``event_callback``..."""
        if self.envelope_type == "slash_commands":
            return "slash_command"
        return str(self.payload.get("type"))

    @property
    def response_url(self) -> str | None:
        url = self.payload.get("response_url")
        if url is None and self.payload.get("response_urls"):
            url = self.payload["response_urls"][0].get("response_url")
        return url

    @property
    def trigger_id(self) -> str | None:
        return self.payload.get("trigger_id")


class SlackRequestBuilder:
    """Builders for the payloads Slack sends. Used standalone or as FakeSlack's base class.

    Standalone, response URLs point at ``response_url_base`` and nothing checks trigger ids. The
    ``_``-prefixed hooks are what :class:`~tests.fakes.slack_api.FakeSlack` overrides.
    """

    def __init__(
        self,
        *,
        team_id: str = "T0STUDY",
        team_domain: str = "studybot-test",
        app_id: str = "A0STUDY",
        bot_user_id: str = "U0BOT",
        bot_id: str = "B0BOT",
        default_user_id: str = "U0ALICE",
        default_channel_id: str = "C0STUDY",
        verification_token: str = "legacy-verification-token",
        response_url_base: str = "https://hooks.slack.invalid",
    ) -> None:
        self.team_id = team_id
        self.team_domain = team_domain
        self.app_id = app_id
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.default_user_id = default_user_id
        self.default_channel_id = default_channel_id
        self.verification_token = verification_token
        self._response_url_base = response_url_base
        self._seq = itertools.count(1)

    # ------------------------------------------------------------------ hooks for FakeSlack

    def _issue_response_url(
        self, kind: str, *, user_id: str, channel_id: str | None, message_ts: str | None
    ) -> str:
        n = next(self._seq)
        return f"{self._response_url_base}/{kind}/{self.team_id}/{n}/{secrets.token_hex(8)}"

    def _issue_trigger_id(self, user_id: str) -> str:
        n = next(self._seq)
        return f"{int(time.time())}{n:04d}.{n}.{secrets.token_hex(16)}"

    def _user_name(self, user_id: str) -> str:
        return user_id.lower()

    def _channel_name(self, channel_id: str) -> str:
        return channel_id.lower()

    def _find_message(self, channel_id: str, ts: str) -> dict[str, Any] | None:
        return None

    def _is_ephemeral(self, channel_id: str, ts: str) -> bool:
        return False

    def _find_view(self, view_id: str | None, callback_id: str | None) -> dict[str, Any] | None:
        return None

    def _find_home_view(self, user_id: str) -> dict[str, Any] | None:
        return None

    def _new_ts(self) -> str:
        return f"{time.time():.6f}"

    # ------------------------------------------------------------------ common parts

    def _user(self, user_id: str) -> dict[str, Any]:
        name = self._user_name(user_id)
        return {"id": user_id, "username": name, "name": name, "team_id": self.team_id}

    def _team(self) -> dict[str, Any]:
        return {"id": self.team_id, "domain": self.team_domain}

    def _channel(self, channel_id: str) -> dict[str, Any]:
        return {"id": channel_id, "name": self._channel_name(channel_id)}

    # ------------------------------------------------------------------ builders

    def slash_command(
        self,
        command: str = "/study",
        text: str = "",
        *,
        user_id: str | None = None,
        channel_id: str | None = None,
        team_id: str | None = None,
    ) -> SlackRequest:
        """A slash command: form fields over HTTP, the same fields as a dict over Socket Mode."""
        user_id = user_id or self.default_user_id
        channel_id = channel_id or self.default_channel_id
        payload = {
            "token": self.verification_token,
            "team_id": team_id or self.team_id,
            "team_domain": self.team_domain,
            "channel_id": channel_id,
            "channel_name": self._channel_name(channel_id),
            "user_id": user_id,
            "user_name": self._user_name(user_id),
            "command": command,
            "text": text,
            "api_app_id": self.app_id,
            "is_enterprise_install": "false",
            "response_url": self._issue_response_url(
                "commands", user_id=user_id, channel_id=channel_id, message_ts=None
            ),
            "trigger_id": self._issue_trigger_id(user_id),
        }
        return SlackRequest("slash_commands", payload)

    def block_action(
        self,
        action_id: str,
        value: str | None = None,
        *,
        user_id: str | None = None,
        channel_id: str | None = None,
        message_ts: str | None = None,
        block_id: str | None = None,
        view_id: str | None = None,
        action_type: str | None = None,
    ) -> SlackRequest:
        """A ``block_actions`` payload: a click on an element of a message or of a view.

        With ``message_ts`` of a message the fake stored, the payload carries that message, and the
        clicked element's ``block_id``/``type``/``text`` (and ``value`` when omitted) come from it.
        With ``view_id`` the container is that view (a modal or the App Home), as Slack sends it:
        no channel, no response_url.
        """
        user_id = user_id or self.default_user_id
        payload: dict[str, Any] = {
            "type": "block_actions",
            "user": self._user(user_id),
            "api_app_id": self.app_id,
            "token": self.verification_token,
            "trigger_id": self._issue_trigger_id(user_id),
            "team": self._team(),
            "enterprise": None,
            "is_enterprise_install": False,
        }
        blocks: list[dict[str, Any]] = []
        if view_id is not None:
            view = self._find_view(view_id, None) or {"id": view_id, "type": "modal", "blocks": []}
            blocks = view.get("blocks") or []
            payload["container"] = {"type": "view", "view_id": view_id}
            payload["view"] = view
        else:
            channel_id = channel_id or self.default_channel_id
            message_ts = message_ts or self._new_ts()
            ephemeral = self._is_ephemeral(channel_id, message_ts)
            message = self._find_message(channel_id, message_ts)
            payload["container"] = {
                "type": "message",
                "message_ts": message_ts,
                "channel_id": channel_id,
                "is_ephemeral": ephemeral,
            }
            payload["channel"] = self._channel(channel_id)
            if not ephemeral:
                payload["message"] = message or {
                    "type": "message",
                    "ts": message_ts,
                    "user": self.bot_user_id,
                    "bot_id": self.bot_id,
                    "text": "",
                    "team": self.team_id,
                    "blocks": [],
                }
                blocks = payload["message"].get("blocks") or []
            payload["state"] = {"values": {}}
            payload["response_url"] = self._issue_response_url(
                "actions", user_id=user_id, channel_id=channel_id, message_ts=message_ts
            )
        payload["actions"] = [
            _action(blocks, action_id, value, block_id, action_type, self._new_ts())
        ]
        return SlackRequest("interactive", payload)

    def view_submission(
        self,
        callback_id: str | None = None,
        values: dict[str, dict[str, Any]] | None = None,
        *,
        view_id: str | None = None,
        private_metadata: str | None = None,
        user_id: str | None = None,
        response_url_enabled: bool = False,
    ) -> SlackRequest:
        """A ``view_submission``: the user pressed Submit on a modal.

        ``values`` is ``{block_id: {action_id: value}}``; a string value becomes a
        ``plain_text_input`` state (or a ``selected_option`` for a select in the stored view); a
        dict is used as the element state as-is. The modal is the one the app opened with
        ``views.open`` (by ``view_id``, else the latest with ``callback_id``); without one a modal
        with matching input blocks is synthesised.

        Like Slack, there is no ``response_url``: ``response_urls`` is empty unless
        ``response_url_enabled`` (a modal with an input block that sets ``response_url_enabled``).
        """
        user_id = user_id or self.default_user_id
        values = values or {}
        stored = self._find_view(view_id, callback_id)
        view: dict[str, Any] = dict(stored) if stored else _synthetic_modal(callback_id, values)
        view.setdefault("id", view_id or f"V{next(self._seq):08d}")
        if callback_id is not None:
            view["callback_id"] = callback_id
        if private_metadata is not None:
            view["private_metadata"] = private_metadata
        view.setdefault("private_metadata", "")
        view["state"] = {"values": _state_values(view.get("blocks") or [], values)}
        payload: dict[str, Any] = {
            "type": "view_submission",
            "team": self._team(),
            "user": self._user(user_id),
            "api_app_id": self.app_id,
            "token": self.verification_token,
            "trigger_id": self._issue_trigger_id(user_id),
            "view": view,
            "response_urls": [],
            "is_enterprise_install": False,
            "enterprise": None,
        }
        if response_url_enabled:
            block_id, inner = next(iter(values.items()), ("input", {"value": ""}))
            payload["response_urls"] = [
                {
                    "block_id": block_id,
                    "action_id": next(iter(inner), "value"),
                    "channel_id": self.default_channel_id,
                    "response_url": self._issue_response_url(
                        "app", user_id=user_id, channel_id=self.default_channel_id, message_ts=None
                    ),
                }
            ]
        return SlackRequest("interactive", payload)

    def message_shortcut(
        self,
        callback_id: str,
        message_text: str = "",
        *,
        message_ts: str | None = None,
        message_user: str | None = None,
        user_id: str | None = None,
        channel_id: str | None = None,
    ) -> SlackRequest:
        """A message shortcut (``type: message_action``) run on a message.

        The message is the stored one at ``message_ts`` if the fake has it, else a user message
        with ``message_text`` (posted by ``message_user``, default the invoking user).
        """
        user_id = user_id or self.default_user_id
        channel_id = channel_id or self.default_channel_id
        message_ts = message_ts or self._new_ts()
        message = self._find_message(channel_id, message_ts) or {
            "client_msg_id": secrets.token_hex(16),
            "type": "message",
            "text": message_text,
            "user": message_user or user_id,
            "ts": message_ts,
            "team": self.team_id,
        }
        payload = {
            "type": "message_action",
            "token": self.verification_token,
            "action_ts": self._new_ts(),
            "team": self._team(),
            "user": self._user(user_id),
            "channel": self._channel(channel_id),
            "is_enterprise_install": False,
            "enterprise": None,
            "callback_id": callback_id,
            "trigger_id": self._issue_trigger_id(user_id),
            "response_url": self._issue_response_url(
                "app", user_id=user_id, channel_id=channel_id, message_ts=message_ts
            ),
            "message_ts": message_ts,
            "message": message,
        }
        return SlackRequest("interactive", payload)

    def event_callback(self, event: dict[str, Any]) -> SlackRequest:
        """An Events API ``event_callback`` wrapping ``event`` (``event_ts`` added if missing)."""
        event = {"event_ts": self._new_ts(), **event}
        payload = {
            "token": self.verification_token,
            "team_id": self.team_id,
            "context_team_id": self.team_id,
            "context_enterprise_id": None,
            "api_app_id": self.app_id,
            "event": event,
            "type": "event_callback",
            "event_id": f"Ev{next(self._seq):010d}",
            "event_time": int(time.time()),
            "authorizations": [
                {
                    "enterprise_id": None,
                    "team_id": self.team_id,
                    "user_id": self.bot_user_id,
                    "is_bot": True,
                    "is_enterprise_install": False,
                }
            ],
            "is_ext_shared_channel": False,
            "event_context": secrets.token_hex(20),
        }
        return SlackRequest("events_api", payload)

    def app_home_opened(self, user_id: str | None = None, *, tab: str = "home") -> SlackRequest:
        """The ``app_home_opened`` event; carries the user's published home view if any."""
        user_id = user_id or self.default_user_id
        event: dict[str, Any] = {
            "type": "app_home_opened",
            "user": user_id,
            "channel": "D" + user_id[1:],
            "tab": tab,
        }
        home = self._find_home_view(user_id)
        if home is not None and tab == "home":
            event["view"] = home
        return self.event_callback(event)


def _find_element(
    blocks: list[dict[str, Any]], action_id: str
) -> tuple[str | None, dict[str, Any] | None]:
    for block in blocks:
        candidates = list(block.get("elements") or [])
        for key in ("accessory", "element"):
            if key in block:
                candidates.append(block[key])
        for el in candidates:
            if isinstance(el, dict) and el.get("action_id") == action_id:
                return block.get("block_id"), el
    return None, None


def _action(
    blocks: list[dict[str, Any]],
    action_id: str,
    value: str | None,
    block_id: str | None,
    action_type: str | None,
    action_ts: str,
) -> dict[str, Any]:
    found_block_id, element = _find_element(blocks, action_id)
    element = element or {}
    kind = action_type or element.get("type") or "button"
    action: dict[str, Any] = {
        "action_id": action_id,
        "block_id": block_id or found_block_id or secrets.token_hex(3),
        "type": kind,
        "action_ts": action_ts,
    }
    if kind in _SELECT_TYPES:
        options = element.get("options") or []
        chosen = next((o for o in options if o.get("value") == value), None)
        action["selected_option"] = chosen or {
            "text": {"type": "plain_text", "text": value or "", "emoji": True},
            "value": value,
        }
    else:
        if "text" in element:
            action["text"] = element["text"]
        elif kind == "button":
            action["text"] = {"type": "plain_text", "text": value or action_id, "emoji": True}
        action["value"] = value if value is not None else element.get("value")
    return action


def _synthetic_modal(callback_id: str | None, values: dict[str, dict[str, Any]]) -> dict[str, Any]:
    blocks = [
        {
            "type": "input",
            "block_id": block_id,
            "label": {"type": "plain_text", "text": block_id},
            "element": {"type": "plain_text_input", "action_id": action_id},
        }
        for block_id, inner in values.items()
        for action_id in inner
    ]
    return {
        "type": "modal",
        "callback_id": callback_id or "",
        "title": {"type": "plain_text", "text": "Modal"},
        "submit": {"type": "plain_text", "text": "Submit"},
        "blocks": blocks,
        "private_metadata": "",
    }


def _state_values(
    blocks: list[dict[str, Any]], values: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    kinds: dict[tuple[str, str], str] = {}
    for block in blocks:
        el = block.get("element")
        if isinstance(el, dict) and "action_id" in el and "block_id" in block:
            kinds[(block["block_id"], el["action_id"])] = el.get("type", "plain_text_input")
    state: dict[str, dict[str, Any]] = {}
    for block_id, inner in values.items():
        state[block_id] = {}
        for action_id, value in inner.items():
            kind = kinds.get((block_id, action_id), "plain_text_input")
            if isinstance(value, dict):
                state[block_id][action_id] = {"type": kind, **value}
            elif kind in _SELECT_TYPES:
                state[block_id][action_id] = {
                    "type": kind,
                    "selected_option": {
                        "text": {"type": "plain_text", "text": value},
                        "value": value,
                    },
                }
            else:
                state[block_id][action_id] = {"type": kind, "value": value}
    return state
