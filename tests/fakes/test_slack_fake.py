"""Contract tests: the real slack-bolt ``AsyncApp`` and slack_sdk clients against ``FakeSlack``.

Three groups:

* a small study app defined here, driven through all three deliveries (in-process
  ``async_dispatch``, the app's own aiohttp server, Socket Mode) for the flows the studybot Slack
  adapter needs: quiz buttons, a click answered privately once, an admin-only subcommand, the
  ``run`` modal, a message shortcut, usage help, the App Home;
* facts about slack-bolt / slack_sdk that the adapter relies on (signatures, lazy ``auth.test``,
  Socket Mode handshake, acks, pings, reconnects, quirks);
* the fake's Web API surface called directly with ``AsyncWebClient``.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_fixtures import (
    DELIVERY_MODES,
    DeliveryMode,
    bolt_delivery,
    dispatch_signed,
    make_bolt_app,
    post_signed,
    serve_bolt_app,
    slack_fake_fixture,  # noqa: F401 - registers the ``slack_fake`` fixture
    socket_mode_handler,
)
from tests.fakes.slack_requests import sign, signed_http_request

pytestmark = pytest.mark.timeout(30)

# --------------------------------------------------------------------------- a small study app

USAGE = "Usage: /study quiz | run | schedule add <spec>"
LONG_OUTPUT = 200


@dataclass
class StudyState:
    answers: dict[tuple[str, str], str] = field(default_factory=dict)


def _run_modal(code: str, channel_id: str) -> dict[str, Any]:
    element: dict[str, Any] = {"type": "plain_text_input", "action_id": "code", "multiline": True}
    if code:
        element["initial_value"] = code
    return {
        "type": "modal",
        "callback_id": "run_snippet",
        "private_metadata": channel_id,
        "title": {"type": "plain_text", "text": "Run a snippet"},
        "submit": {"type": "plain_text", "text": "Run"},
        "blocks": [
            {
                "type": "input",
                "block_id": "code",
                "label": {"type": "plain_text", "text": "Code"},
                "element": element,
            }
        ],
    }


def build_study_app(fake: FakeSlack) -> tuple[AsyncApp, StudyState]:
    """What the adapter will do, in miniature: ack first, slow work after."""
    app = make_bolt_app(fake)
    state = StudyState()

    @app.command("/study")
    async def study(ack: Any, command: dict[str, Any], say: Any, respond: Any, client: Any) -> None:
        sub, _, rest = command["text"].strip().partition(" ")
        if sub == "quiz":
            await ack()
            buttons = [
                {
                    "type": "button",
                    "action_id": f"answer:{c}",
                    "text": {"type": "plain_text", "text": c},
                    "value": c,
                }
                for c in "ABC"
            ]
            await say(
                text="What is torch.zeros(2, 3).shape?",
                blocks=[
                    {
                        "type": "section",
                        "block_id": "question",
                        "text": {"type": "mrkdwn", "text": "What is `torch.zeros(2, 3).shape`?"},
                    },
                    {"type": "actions", "block_id": "choices", "elements": buttons},
                ],
            )
        elif sub == "run":
            await ack()
            await client.views_open(
                trigger_id=command["trigger_id"], view=_run_modal("", command["channel_id"])
            )
        elif sub == "schedule" and rest.startswith("add"):
            await ack()
            user = (await client.users_info(user=command["user_id"]))["user"]
            if not (user["is_admin"] or user["is_owner"]):
                await respond("Only workspace admins can add schedules.")
                return
            await respond(f"Schedule added: {rest.removeprefix('add').strip()}")
        else:
            await ack(f"Unknown subcommand {sub!r}. {USAGE}")

    @app.action(re.compile(r"^answer:"))
    async def answer(ack: Any, body: dict[str, Any], action: dict[str, Any], client: Any) -> None:
        await ack()
        key = (body["container"]["message_ts"], body["user"]["id"])
        if key in state.answers:
            text = "You already answered."
        else:
            state.answers[key] = action["value"]
            text = "Correct!" if action["value"] == "B" else "Not quite: it is (2, 3)."
        await client.chat_postEphemeral(
            channel=body["channel"]["id"], user=body["user"]["id"], text=text
        )

    @app.view("run_snippet")
    async def run_submit(ack: Any, view: dict[str, Any], client: Any) -> None:
        code = view["state"]["values"]["code"]["code"]["value"]
        output = f"out: {code}"  # the sandbox, in miniature
        shown = output if len(output) <= LONG_OUTPUT else "Output attached as output.txt"
        await ack(
            response_action="update",
            view={
                "type": "modal",
                "title": {"type": "plain_text", "text": "Result"},
                "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": shown}}],
            },
        )
        if len(output) > LONG_OUTPUT:
            await client.files_upload_v2(
                channel=view["private_metadata"], content=output, filename="output.txt"
            )

    @app.shortcut("run_code")
    async def run_shortcut(ack: Any, shortcut: dict[str, Any], client: Any) -> None:
        await ack()
        match = re.search(r"```(.*?)```", shortcut["message"]["text"], re.DOTALL)
        code = match.group(1).strip() if match else ""
        await client.views_open(
            trigger_id=shortcut["trigger_id"], view=_run_modal(code, shortcut["channel"]["id"])
        )

    @app.event("app_home_opened")
    async def home(event: dict[str, Any], client: Any) -> None:
        answered = sum(1 for (_, user) in state.answers if user == event["user"])
        await client.views_publish(
            user_id=event["user"],
            view={
                "type": "home",
                "blocks": [
                    {"type": "section", "text": {"type": "mrkdwn", "text": f"Answers: {answered}"}}
                ],
            },
        )

    return app, state


modes = pytest.mark.parametrize("mode", DELIVERY_MODES)


@modes
async def test_quiz_posts_buttons_and_a_click_is_answered_privately_once(
    mode: DeliveryMode, slack_fake: FakeSlack
) -> None:
    app, state = build_study_app(slack_fake)
    async with bolt_delivery(mode, app, slack_fake) as deliver:
        ack = await deliver(slack_fake.slash_command(text="quiz"))
        assert (ack.status, ack.payload) == (200, None)
        assert ack.latency < 3
        post = await slack_fake.wait_for_call("chat.postMessage")
        assert post.ok
        assert post.args["channel"] == "C0STUDY"
        msg = slack_fake.message(post.response["ts"], "C0STUDY")
        assert msg.action_ids() == ["answer:A", "answer:B", "answer:C"]

        click = slack_fake.block_action("answer:B", message_ts=msg.ts)
        assert click.payload["actions"][0]["block_id"] == "choices"
        assert click.payload["message"]["blocks"] == msg.blocks
        assert (await deliver(click)).status == 200
        first = await slack_fake.wait_for_call("chat.postEphemeral")
        assert (first.args["user"], first.args["text"]) == ("U0ALICE", "Correct!")

        assert (await deliver(slack_fake.block_action("answer:A", message_ts=msg.ts))).status == 200
        second = await slack_fake.wait_for_call("chat.postEphemeral", count=2)
        assert second.args["text"] == "You already answered."

    assert state.answers == {(msg.ts, "U0ALICE"): "B"}
    assert [e.text for e in slack_fake.ephemerals_for("U0ALICE")] == [
        "Correct!",
        "You already answered.",
    ]
    assert slack_fake.channel_messages("C0STUDY") == [msg]


@modes
async def test_a_non_admin_is_refused_schedule_add(
    mode: DeliveryMode, slack_fake: FakeSlack
) -> None:
    app, _ = build_study_app(slack_fake)
    async with bolt_delivery(mode, app, slack_fake) as deliver:
        await deliver(slack_fake.slash_command(text="schedule add daily 09:00"))
        refused = await slack_fake.wait_for_response_url_call()
        await deliver(slack_fake.slash_command(text="schedule add daily 09:00", user_id="U0ADMIN"))
        allowed = await slack_fake.wait_for_response_url_call(count=2)

    assert [c.args["user"] for c in slack_fake.calls_to("users.info")] == ["U0ALICE", "U0ADMIN"]
    assert (refused.user_id, refused.effect) == ("U0ALICE", "ephemeral")
    assert refused.text == "Only workspace admins can add schedules."
    assert (allowed.user_id, allowed.text) == ("U0ADMIN", "Schedule added: daily 09:00")
    assert slack_fake.calls_to("chat.postMessage") == []


@modes
async def test_run_modal_submit_returns_output(mode: DeliveryMode, slack_fake: FakeSlack) -> None:
    app, _ = build_study_app(slack_fake)
    async with bolt_delivery(mode, app, slack_fake) as deliver:
        assert (await deliver(slack_fake.slash_command(text="run"))).payload is None
        opened = await slack_fake.wait_for_call("views.open")
        assert opened.ok, opened.response
        modal = slack_fake.view(callback_id="run_snippet")
        assert (modal.user_id, modal.title) == ("U0ALICE", "Run a snippet")

        ack = await deliver(slack_fake.view_submission("run_snippet", {"code": {"code": "1 + 1"}}))
        assert ack.payload is not None
        assert ack.payload["response_action"] == "update"
        assert ack.payload["view"]["blocks"][0]["text"]["text"] == "out: 1 + 1"

        long_code = "x" * (LONG_OUTPUT + 1)
        ack = await deliver(
            slack_fake.view_submission("run_snippet", {"code": {"code": long_code}})
        )
        assert ack.payload is not None
        assert "attached" in ack.payload["view"]["blocks"][0]["text"]["text"]
        await slack_fake.wait_for_call("files.completeUploadExternal")

    (uploaded,) = slack_fake.files.values()
    assert (uploaded.filename, uploaded.text, uploaded.completed) == (
        "output.txt",
        f"out: {long_code}",
        True,
    )
    assert uploaded.channel_ids == ["C0STUDY"]


@modes
async def test_message_shortcut_opens_run_modal_with_the_code_block(
    mode: DeliveryMode, slack_fake: FakeSlack
) -> None:
    app, _ = build_study_app(slack_fake)
    async with bolt_delivery(mode, app, slack_fake) as deliver:
        shortcut = slack_fake.message_shortcut("run_code", "try this:\n```print(2 ** 10)```")
        assert (await deliver(shortcut)).status == 200
        await slack_fake.wait_for_call("views.open")
    modal = slack_fake.view(callback_id="run_snippet")
    assert modal.blocks[0]["element"]["initial_value"] == "print(2 ** 10)"


@modes
async def test_bad_subcommand_gets_usage_help(mode: DeliveryMode, slack_fake: FakeSlack) -> None:
    app, _ = build_study_app(slack_fake)
    async with bolt_delivery(mode, app, slack_fake) as deliver:
        ack = await deliver(slack_fake.slash_command(text="frobnicate"))
    assert ack.status == 200
    assert ack.payload == {"text": f"Unknown subcommand 'frobnicate'. {USAGE}"}
    assert not [c for c in slack_fake.calls if c.method.startswith(("chat.", "views."))]


@modes
async def test_app_home_opened_publishes_the_home_tab(
    mode: DeliveryMode, slack_fake: FakeSlack
) -> None:
    app, _ = build_study_app(slack_fake)
    async with bolt_delivery(mode, app, slack_fake) as deliver:
        assert (await deliver(slack_fake.app_home_opened("U0ALICE"))).status == 200
        publish = await slack_fake.wait_for_call("views.publish")
    assert (publish.ok, publish.args["user_id"]) == (True, "U0ALICE")
    home = slack_fake.home_views["U0ALICE"]
    assert home.blocks[0]["text"]["text"] == "Answers: 0"
    # the next app_home_opened carries the published view, as Slack's does
    assert slack_fake.app_home_opened("U0ALICE").payload["event"]["view"]["id"] == home.id


# --------------------------------------------------------------------------- signatures, HTTP


def test_signing_agrees_with_slack_sdk_verifier() -> None:
    verifier = SignatureVerifier("s3cret")
    headers, body = signed_http_request("a=1&b=2", "s3cret")
    assert verifier.is_valid_request(body, headers)
    ts = int(time.time())
    assert sign(body, "s3cret", ts) == verifier.generate_signature(timestamp=str(ts), body=body)
    wrong_headers, _ = signed_http_request(body, "s3cret", valid=False)
    assert not verifier.is_valid_request(body, wrong_headers)
    stale_headers, _ = signed_http_request(body, "s3cret", timestamp=int(time.time()) - 600)
    assert not verifier.is_valid_request(body, stale_headers)


async def test_in_process_dispatch_checks_the_signature(slack_fake: FakeSlack) -> None:
    app = make_bolt_app(slack_fake)
    ran: list[str] = []

    @app.command("/study")
    async def study(ack: Any, command: dict[str, Any]) -> None:
        ran.append(command["text"])
        await ack()

    secret = slack_fake.signing_secret
    ok = await dispatch_signed(app, slack_fake.slash_command(text="quiz"), secret)
    assert (ok.status, ran) == (200, ["quiz"])

    wrong = await dispatch_signed(app, slack_fake.slash_command(text="x"), secret, valid=False)
    assert (wrong.status, json.loads(wrong.body)) == (401, {"error": "invalid request"})
    stale = await dispatch_signed(
        app, slack_fake.slash_command(text="x"), secret, timestamp=int(time.time()) - 600
    )
    assert stale.status == 401
    unsigned = await app.async_dispatch(
        AsyncBoltRequest(body=slack_fake.slash_command(text="x").http_body(), headers={})
    )
    assert unsigned.status == 401
    assert ran == ["quiz"]


async def test_app_web_server_checks_the_signature_over_a_real_socket(
    slack_fake: FakeSlack,
) -> None:
    app = make_bolt_app(slack_fake)
    ran: list[str] = []

    @app.command("/study")
    async def study(ack: Any, command: dict[str, Any]) -> None:
        ran.append(command["text"])
        await ack(f"got {command['text']}")

    async with serve_bolt_app(app) as url:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/slack/events", url)
        secret = slack_fake.signing_secret
        status, body, ctype = await post_signed(url, slack_fake.slash_command(text="quiz"), secret)
        assert (status, body, ctype) == (200, "got quiz", "text/plain")
        status, body, _ = await post_signed(
            url, slack_fake.slash_command(text="x"), secret, valid=False
        )
        assert (status, json.loads(body)) == (401, {"error": "invalid request"})
    assert ran == ["quiz"]


async def test_ssl_check_is_answered_before_signature_verification(slack_fake: FakeSlack) -> None:
    """Slack's ``ssl_check=1`` probe of a slash-command URL: the default ``ssl_check_enabled``
    middleware runs before ``request_verification``, so even an unsigned probe gets an empty 200
    and nothing else happens (no auth.test, no listener). Leave both enabled."""
    app = make_bolt_app(slack_fake)
    probe = AsyncBoltRequest(
        body="ssl_check=1&token=legacy",
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    resp = await app.async_dispatch(probe)
    assert (resp.status, resp.body) == (200, "")
    assert slack_fake.calls == []


async def test_auth_test_is_called_lazily_once_and_feeds_self_event_filtering(
    slack_fake: FakeSlack,
) -> None:
    app = make_bolt_app(slack_fake)
    seen: list[str] = []

    @app.event("message")
    async def on_message(event: dict[str, Any]) -> None:
        seen.append(event["text"])

    assert slack_fake.calls == []  # AsyncApp has no token_verification_enabled: no call at init
    secret = slack_fake.signing_secret
    own = {"type": "message", "user": "U0BOT", "bot_id": "B0BOT", "text": "mine"}
    theirs = {"type": "message", "user": "U0ALICE", "text": "hello", "channel": "C0STUDY"}
    assert (await dispatch_signed(app, slack_fake.event_callback(own), secret)).status == 200
    assert (await dispatch_signed(app, slack_fake.event_callback(theirs), secret)).status == 200
    await asyncio.sleep(0.05)
    assert seen == ["hello"]  # auth.test's user_id / bot_id told bolt which events are its own
    (auth,) = slack_fake.calls_to("auth.test")
    assert auth.token == slack_fake.bot_token
    assert {k: auth.response[k] for k in ("user_id", "bot_id", "team_id")} == {
        "user_id": "U0BOT",
        "bot_id": "B0BOT",
        "team_id": "T0STUDY",
    }


async def test_misconfiguration_surfaces_only_per_request(slack_fake: FakeSlack) -> None:
    """Neither a wrong bot token nor an empty signing secret fails at startup.

    A wrong token: auth.test fails on the first request, bolt answers 200 with an apology text
    and runs no listener. An empty secret (HTTP mode): 500 on every request. So the adapter
    should call ``auth.test`` itself at startup and refuse an empty secret in HTTP mode.
    """
    ran: list[str] = []
    bad_token = AsyncApp(
        client=AsyncWebClient(token="xoxb-wrong", base_url=slack_fake.api_url),
        signing_secret=slack_fake.signing_secret,
        name="bad-token",
    )
    no_secret = AsyncApp(client=_client(slack_fake), signing_secret="", name="no-secret")
    for app in (bad_token, no_secret):

        @app.command("/study")
        async def study(ack: Any) -> None:
            ran.append("ran")
            await ack()

    resp = await dispatch_signed(bad_token, slack_fake.slash_command(), slack_fake.signing_secret)
    assert (resp.status, "reinstall" in resp.body) == (200, True)
    assert slack_fake.calls_to("auth.test")[0].response["error"] == "invalid_auth"
    resp = await dispatch_signed(no_secret, slack_fake.slash_command(), "any")
    assert resp.status == 500
    assert ran == []


async def test_the_word_payload_in_a_slash_command_breaks_bolt_http_parsing(
    slack_fake: FakeSlack,
) -> None:
    """slack-bolt quirk: a form body containing ``payload`` is parsed as interactivity.

    ``slack_bolt.request.internals.parse_body`` looks for the substring ``payload`` and then for
    a ``payload=`` field; a slash command whose text mentions "payload" parses as ``{}``, is
    unhandled and answers 404 in HTTP mode. Socket Mode (already-parsed dict) is unaffected,
    and the bot's own HTTP endpoint (``bot.adapters.slack.http``) parses it as a form.
    """
    app = make_bolt_app(slack_fake)
    ran: list[str] = []

    @app.command("/study")
    async def study(ack: Any, command: dict[str, Any]) -> None:
        ran.append(command["text"])
        await ack()

    request = slack_fake.slash_command(text="run payload = 1")
    headers, body = request.signed(slack_fake.signing_secret)
    as_bolt_parses_it = AsyncBoltRequest(body=body, headers=dict(headers))
    assert as_bolt_parses_it.body == {}
    assert (await app.async_dispatch(as_bolt_parses_it)).status == 404
    assert ran == []
    assert (await dispatch_signed(app, request, slack_fake.signing_secret)).status == 200
    assert ran == ["run payload = 1"]
    async with bolt_delivery("socket", app, slack_fake) as deliver:
        assert (await deliver(slack_fake.slash_command(text="run payload = 1"))).status == 200
    assert ran == ["run payload = 1"] * 2


def test_request_builders_encode_like_slack(slack_fake: FakeSlack) -> None:
    cmd = slack_fake.slash_command(text="quiz torch")
    parsed = AsyncBoltRequest(body=cmd.http_body(), headers={"content-type": cmd.content_type})
    assert parsed.body == cmd.payload
    assert cmd.payload["response_url"].startswith(slack_fake.url + "/hooks/commands/")
    assert cmd.trigger_id
    assert cmd.type == "slash_command"

    click = slack_fake.block_action("answer:A", value="A")
    assert click.http_body().startswith("payload=")
    parsed = AsyncBoltRequest(body=click.http_body(), headers={"content-type": click.content_type})
    assert parsed.body == click.payload
    assert click.type == "block_actions"

    event = slack_fake.app_home_opened()
    assert event.content_type == "application/json"
    assert json.loads(event.http_body())["event"]["type"] == "app_home_opened"

    submission = slack_fake.view_submission("cb", {"b": {"a": "v"}}, private_metadata="m")
    assert submission.response_url is None
    assert submission.payload["response_urls"] == []
    assert submission.payload["view"]["state"]["values"] == {
        "b": {"a": {"type": "plain_text_input", "value": "v"}}
    }
    assert submission.payload["view"]["private_metadata"] == "m"


# --------------------------------------------------------------------------- Socket Mode


async def test_socket_mode_handshake(slack_fake: FakeSlack) -> None:
    app = make_bolt_app(slack_fake)
    async with socket_mode_handler(app, slack_fake):
        conn = await slack_fake.wait_for_socket_connection()
        # the first ping is sent right after connecting (sdk-ping-pong:<time>)
        await slack_fake.wait_for(
            lambda: conn.pings_received or None, timeout=2, what="the client's first ping"
        )
        assert conn.pings_received[0].startswith(b"sdk-ping-pong:")
        assert await slack_fake.socket_ping() == conn.pongs_received[0]  # it answers our pings
    (opened,) = slack_fake.calls
    assert (opened.method, opened.token) == ("apps.connections.open", slack_fake.app_token)
    assert opened.response["url"].startswith("ws://127.0.0.1:")  # plain ws:// is accepted
    assert not slack_fake.calls_to("auth.test")  # nothing else is called on connect


async def test_socket_mode_client_pings_every_ping_interval(slack_fake: FakeSlack) -> None:
    app = make_bolt_app(slack_fake)
    async with socket_mode_handler(app, slack_fake, ping_interval=0.1):
        conn = await slack_fake.wait_for_socket_connection()
        await slack_fake.wait_for(
            lambda: conn if len(conn.pings_received) >= 3 else None,
            timeout=3,
            what="three pings",
        )
    assert all(p.startswith(b"sdk-ping-pong:") or p == b"" for p in conn.pings_received)


async def test_socket_slash_command_is_acked_and_say_respond_and_client_reach_the_fake(
    slack_fake: FakeSlack,
) -> None:
    app = make_bolt_app(slack_fake)

    acked = asyncio.Event()

    @app.command("/study")
    async def study(ack: Any, say: Any, respond: Any, client: Any, command: dict[str, Any]) -> None:
        await ack()
        await acked.wait()  # work after the ack must not delay it: this waits for the ack
        await say("from say")
        await respond("from respond")
        await client.chat_postMessage(channel=command["channel_id"], text="from client")

    async with socket_mode_handler(app, slack_fake):
        handle = await slack_fake.socket_send_request(slack_fake.slash_command(text="quiz"))
        assert handle.accepts_response_payload
        ack = await handle.ack(timeout=3)
        acked.set()
        assert ack.raw == {"envelope_id": handle.envelope_id}  # no payload key at all
        assert slack_fake.calls_to("chat.postMessage") == []  # the ack came first
        await slack_fake.wait_for_call("chat.postMessage", count=2)
        hook = await slack_fake.wait_for_response_url_call()
    assert [c.args["text"] for c in slack_fake.calls_to("chat.postMessage")] == [
        "from say",
        "from client",
    ]
    assert (hook.text, hook.effect, hook.kind) == ("from respond", "ephemeral", "commands")
    assert slack_fake.socket_unexpected_acks == []


async def test_socket_block_actions_and_view_submission_acks(slack_fake: FakeSlack) -> None:
    app = make_bolt_app(slack_fake)

    @app.action("answer")
    async def answer(ack: Any) -> None:
        await ack()

    @app.view("run_snippet")
    async def submit(ack: Any) -> None:
        await ack(response_action="errors", errors={"code": "Code is empty"})

    async with socket_mode_handler(app, slack_fake):
        click = await slack_fake.socket_send_request(slack_fake.block_action("answer", "A"))
        assert not click.accepts_response_payload
        assert (await click.ack()).payload is None
        sub = await slack_fake.socket_send(
            "interactive", slack_fake.view_submission("run_snippet", {"code": {"code": ""}}).payload
        )
        assert sub.accepts_response_payload
        assert (await sub.ack()).payload == {
            "response_action": "errors",
            "errors": {"code": "Code is empty"},
        }


async def test_socket_unhandled_envelope_is_never_acked(slack_fake: FakeSlack) -> None:
    """bolt's Socket Mode adapter sends no ack at all for a non-200 (here 404 unhandled)."""
    app = make_bolt_app(slack_fake)
    async with socket_mode_handler(app, slack_fake):
        handle = await slack_fake.socket_send_request(slack_fake.slash_command("/unknown"))
        await handle.assert_not_acked(within=0.3)
        with pytest.raises(AssertionError, match="timed out"):
            await handle.ack(timeout=0.05)


async def test_socket_refresh_requested_reconnects_to_a_new_url(slack_fake: FakeSlack) -> None:
    app = make_bolt_app(slack_fake)

    @app.command("/study")
    async def study(ack: Any) -> None:
        await ack()

    async with socket_mode_handler(app, slack_fake):
        old = await slack_fake.socket_disconnect("refresh_requested")
        new = await slack_fake.wait_for_socket_connection(count=2)
        assert new is not old
        await slack_fake.wait_for(
            lambda: True if not old.open else None, timeout=2, what="the old socket to close"
        )
        handle = await slack_fake.socket_send_request(slack_fake.slash_command())
        assert handle.connection is new
        await handle.ack()
    assert len(slack_fake.calls_to("apps.connections.open")) == 2


async def test_socket_dropped_by_the_server_reconnects(slack_fake: FakeSlack) -> None:
    app = make_bolt_app(slack_fake)

    @app.command("/study")
    async def study(ack: Any) -> None:
        await ack()

    async with socket_mode_handler(app, slack_fake):
        await slack_fake.socket_close()
        await slack_fake.wait_for_socket_connection(count=2)
        await (await slack_fake.socket_send_request(slack_fake.slash_command())).ack()
    assert len(slack_fake.calls_to("apps.connections.open")) == 2


async def test_socket_envelopes_are_handled_concurrently(slack_fake: FakeSlack) -> None:
    """slack_sdk runs each envelope's listeners in its own task: a slow ack delays only itself."""
    app = make_bolt_app(slack_fake)

    all_running = asyncio.Barrier(3)

    @app.command("/study")
    async def study(ack: Any) -> None:
        # Slow work *before* ack (the anti-pattern): no envelope is acked until all three
        # listeners run at once, which could never happen if they ran one after another.
        await all_running.wait()
        await ack()

    async with socket_mode_handler(app, slack_fake):
        handles = [
            await slack_fake.socket_send_request(slack_fake.slash_command()) for _ in range(3)
        ]
        acks = [await h.ack(timeout=5) for h in handles]
    assert len(acks) == 3


async def test_socket_mode_needs_no_hello_and_replaces_a_silent_connection(
    slack_fake: FakeSlack,
) -> None:
    app = make_bolt_app(slack_fake)

    @app.command("/study")
    async def study(ack: Any) -> None:
        await ack()

    slack_fake.send_hello = False
    slack_fake.answer_pings = False
    async with socket_mode_handler(app, slack_fake, ping_interval=0.1):
        await (await slack_fake.socket_send_request(slack_fake.slash_command())).ack()
        assert slack_fake.socket_connections[0].messages_received  # the ack, without a hello
        await slack_fake.wait_for_socket_connection(count=2, timeout=3)
    assert len(slack_fake.calls_to("apps.connections.open")) >= 2


async def test_socket_mode_with_a_bad_app_token_retries_forever(slack_fake: FakeSlack) -> None:
    """slack_sdk quirk: ``connect()`` logs and retries every ping_interval, it never raises.

    The adapter must check the app token itself (``apps.connections.open``) to fail fast.
    """
    app = make_bolt_app(slack_fake)
    handler = AsyncSocketModeHandler(app, app_token="xapp-1-wrong", ping_interval=0.05)
    try:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(handler.connect_async(), timeout=0.5)
    finally:
        await handler.close_async()
    attempts = slack_fake.calls_to("apps.connections.open")
    assert len(attempts) >= 2
    assert {c.response["error"] for c in attempts} == {"invalid_auth"}
    client = AsyncWebClient(base_url=slack_fake.api_url)
    with pytest.raises(SlackApiError) as err:
        await client.apps_connections_open(app_token=slack_fake.bot_token)
    assert err.value.response["error"] == "not_allowed_token_type"


# --------------------------------------------------------------------------- the Web API surface


def _client(fake: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token=fake.bot_token, base_url=fake.api_url)


BUTTON = {
    "type": "actions",
    "block_id": "b",
    "elements": [
        {"type": "button", "action_id": "go", "text": {"type": "plain_text", "text": "Go"}}
    ],
}


async def test_base_url_trailing_slash_is_added_by_the_client(slack_fake: FakeSlack) -> None:
    client = AsyncWebClient(token=slack_fake.bot_token, base_url=slack_fake.api_url.rstrip("/"))
    assert client.base_url == slack_fake.api_url
    assert (await client.auth_test())["user_id"] == "U0BOT"


async def test_messages_post_update_delete_and_ephemeral(slack_fake: FakeSlack) -> None:
    client = _client(slack_fake)
    posted = await client.chat_postMessage(channel="C0STUDY", text="q", blocks=[BUTTON])
    assert (posted["channel"], posted["message"]["bot_id"]) == ("C0STUDY", "B0BOT")
    ts = posted["ts"]
    updated = await client.chat_update(channel="C0STUDY", ts=ts, text="closed", blocks=[])
    assert updated["ts"] == ts
    msg = slack_fake.message(ts)
    assert (msg.text, msg.blocks, len(msg.history)) == ("closed", [], 1)
    assert msg.history[0]["blocks"] == [BUTTON]

    eph = await client.chat_postEphemeral(channel="C0STUDY", user="U0ALICE", text="psst")
    assert eph["message_ts"]
    reply = await client.chat_postMessage(channel="C0STUDY", thread_ts=ts, text="in thread")
    assert slack_fake.message(reply["ts"]).thread_ts == ts
    dm = await client.chat_postMessage(channel="U0ALICE", text="hi")
    assert dm["channel"] == "D0ALICE"

    await client.chat_delete(channel="C0STUDY", ts=ts)
    assert msg.deleted
    assert slack_fake.channel_messages("C0STUDY") == [slack_fake.message(reply["ts"])]
    with pytest.warns(UserWarning, match="top-level `text`"), pytest.raises(SlackApiError) as err:
        await client.chat_postMessage(channel="C0STUDY")  # slack_sdk warns, Slack refuses
    assert err.value.response["error"] == "no_text"
    for call, error in [
        (client.chat_update(channel="C0STUDY", ts=ts, text="x"), "message_not_found"),
        (client.chat_postMessage(channel="C0NOPE", text="x"), "channel_not_found"),
        (client.chat_postEphemeral(channel="C0STUDY", user="U0NOBODY", text="x"), "user_not_found"),
    ]:
        with pytest.raises(SlackApiError) as err:
            await call
        assert err.value.response["error"] == error


async def test_block_kit_limits_are_checked(slack_fake: FakeSlack) -> None:
    client = _client(slack_fake)
    too_long = {
        "type": "actions",
        "elements": [
            {"type": "button", "action_id": "a", "text": {"type": "plain_text", "text": "x" * 76}}
        ],
    }
    with pytest.raises(SlackApiError) as err:
        await client.chat_postMessage(
            channel="C0STUDY", text="t", blocks=[too_long, {"type": "sectoin"}]
        )
    assert err.value.response["error"] == "invalid_blocks"
    assert any("75" in e for e in err.value.response["errors"])
    assert any("sectoin" in e for e in err.value.response["errors"])


async def test_too_much_text_in_all_blocks_is_refused_whole(slack_fake: FakeSlack) -> None:
    """Every block within its own limit, 12,001 characters in all: Slack's msg_blocks_too_long,
    on chat.* and on a response_url (where the member then sees nothing)."""
    client = _client(slack_fake)

    def section(n: int) -> dict[str, Any]:
        return {"type": "section", "text": {"type": "mrkdwn", "text": "x" * n}}

    fits = [section(3000)] * 4
    over = [*fits, {"type": "context", "elements": [{"type": "mrkdwn", "text": "y"}]}]
    assert (await client.chat_postMessage(channel="C0STUDY", text="t", blocks=fits))["ok"]
    with pytest.raises(SlackApiError) as err:
        await client.chat_postMessage(channel="C0STUDY", text="t", blocks=over)
    assert err.value.response["error"] == "msg_blocks_too_long"
    posted = await client.chat_postMessage(channel="C0STUDY", text="q", blocks=[BUTTON])
    click = slack_fake.block_action("go", message_ts=posted["ts"])
    assert click.response_url is not None
    hook = AsyncWebhookClient(click.response_url)
    assert (await hook.send(text="t", blocks=over)).status_code == 400
    assert slack_fake.response_url_calls[-1].effect == "rejected"
    assert slack_fake.ephemerals_for("U0ALICE") == []


async def test_modals_open_update_and_triggers(slack_fake: FakeSlack) -> None:
    client = _client(slack_fake)
    trigger = slack_fake.slash_command(text="run").trigger_id
    view = _run_modal("", "C0STUDY")
    opened = (await client.views_open(trigger_id=trigger, view=view))["view"]
    assert opened["callback_id"] == "run_snippet"
    assert opened["id"].startswith("V")
    fake_view = slack_fake.views[opened["id"]]
    new = {**view, "title": {"type": "plain_text", "text": "Running..."}}
    with pytest.raises(SlackApiError) as err:
        await client.views_update(view_id=opened["id"], hash="stale", view=new)
    assert err.value.response["error"] == "hash_conflict"
    await client.views_update(view_id=opened["id"], hash=opened["hash"], view=new)
    assert (fake_view.title, len(fake_view.history)) == ("Running...", 1)

    for trigger_id, error in [("123.456.nope", "invalid_trigger_id")]:
        with pytest.raises(SlackApiError) as err:
            await client.views_open(trigger_id=trigger_id, view=view)
        assert err.value.response["error"] == error
    bad_title = {**view, "title": {"type": "plain_text", "text": "t" * 25}}
    with pytest.raises(SlackApiError) as err:
        await client.views_open(trigger_id=trigger, view=bad_title)
    assert err.value.response["error"] == "invalid_arguments"

    slack_fake.trigger_ttl = 0.05
    late = slack_fake.slash_command(text="run").trigger_id
    await asyncio.sleep(0.1)
    with pytest.raises(SlackApiError) as err:
        await client.views_open(trigger_id=late, view=view)
    assert err.value.response["error"] == "expired_trigger_id"


async def test_views_publish_app_home(slack_fake: FakeSlack) -> None:
    client = _client(slack_fake)
    home = {
        "type": "home",
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "1"}}],
    }
    first = (await client.views_publish(user_id="U0ALICE", view=home))["view"]
    second = (await client.views_publish(user_id="U0ALICE", view=home, hash=first["hash"]))["view"]
    assert first["id"] == second["id"]
    assert first["hash"] != second["hash"]
    assert slack_fake.home_views["U0ALICE"].type == "home"
    with pytest.raises(SlackApiError) as err:
        await client.views_publish(user_id="U0ALICE", view={**home, "type": "modal"})
    assert err.value.response["error"] == "invalid_arguments"


async def test_files_upload_v2_records_the_bytes(slack_fake: FakeSlack) -> None:
    client = _client(slack_fake)
    data = bytes(range(256)) * 10
    result = await client.files_upload_v2(
        channel="C0STUDY", file=data, filename="out.bin", title="Output", initial_comment="see"
    )
    file = slack_fake.files[result["file"]["id"]]
    assert (file.content, file.length, file.title, file.completed) == (data, 2560, "Output", True)
    assert [c.method for c in slack_fake.calls] == [
        "files.getUploadURLExternal",
        "files.completeUploadExternal",
    ]
    (shared,) = slack_fake.channel_messages("C0STUDY")
    assert (shared.text, shared.files[0]["id"]) == ("see", file.id)
    with pytest.raises(SlackApiError) as err:
        await client.api_call("files.upload", data={"content": "x"})
    assert err.value.response["error"] == "method_deprecated"


async def test_a_members_file_is_described_by_files_info_and_served_only_with_the_token(
    slack_fake: FakeSlack,
) -> None:
    message = slack_fake.add_user_file("pack.yaml", "pack: p\n", user_id="U0ALICE", text="mine")
    [entry] = message.to_api()["files"]
    assert (entry["name"], entry["size"], entry["user"]) == ("pack.yaml", 8, "U0ALICE")
    info = (await _client(slack_fake).files_info(file=entry["id"]))["file"]
    assert info["url_private_download"].startswith(f"{slack_fake.url}/files-pri/T0STUDY-")
    url = info["url_private_download"]
    async with aiohttp.ClientSession() as session:
        headers = {"Authorization": f"Bearer {slack_fake.bot_token}"}
        async with session.get(url, headers=headers) as ok:
            assert (ok.status, await ok.read()) == (200, b"pack: p\n")
        async with session.get(url) as anonymous:  # Slack: a 200 sign-in page, not a 401
            assert anonymous.status == 200 and anonymous.content_type == "text/html"
    assert [(d.authorized, d.status) for d in slack_fake.file_downloads] == [
        (True, 200),
        (False, 200),
    ]
    with pytest.raises(SlackApiError) as err:
        await _client(slack_fake).files_info(file="F404")
    assert err.value.response["error"] == "file_not_found"
    # A shortcut on that message carries the file, as Slack's payload does.
    shortcut = slack_fake.message_shortcut("cb", message_ts=message.ts)
    assert shortcut.payload["message"]["files"][0]["id"] == entry["id"]


async def test_users_usergroups_and_conversations(slack_fake: FakeSlack) -> None:
    client = _client(slack_fake)
    slack_fake.add_user("U0OWNER", name="olga", is_owner=True, tz="Europe/Berlin")
    slack_fake.add_usergroup("S0ADMINS", ["U0ADMIN", "U0OWNER"])
    owner = (await client.users_info(user="U0OWNER"))["user"]
    assert (owner["is_owner"], owner["is_admin"], owner["tz"]) == (True, False, "Europe/Berlin")
    assert owner["tz_offset"] in (3600, 7200)
    assert (await client.users_info(user="U0ADMIN"))["user"]["is_admin"] is True
    listed = await client.usergroups_users_list(usergroup="S0ADMINS")
    assert listed["users"] == ["U0ADMIN", "U0OWNER"]
    channel = (await client.conversations_info(channel="C0STUDY"))["channel"]
    assert (channel["name"], channel["is_private"]) == ("study", False)
    for call, error in [
        (client.users_info(user="U0NOBODY"), "user_not_found"),
        (client.usergroups_users_list(usergroup="S0NOPE"), "no_such_subteam"),
        (client.conversations_info(channel="C0NOPE"), "channel_not_found"),
    ]:
        with pytest.raises(SlackApiError) as err:
            await call
        assert err.value.response["error"] == error


async def test_unknown_methods_and_bad_tokens_are_recorded(slack_fake: FakeSlack) -> None:
    with pytest.raises(SlackApiError) as err:
        await _client(slack_fake).api_call("chat.frobnicate", json={"x": 1})
    assert err.value.response["error"] == "unknown_method"
    for token, error in [(None, "not_authed"), ("xoxb-wrong", "invalid_auth")]:
        with pytest.raises(SlackApiError) as err:
            await AsyncWebClient(token=token, base_url=slack_fake.api_url).auth_test()
        assert err.value.response["error"] == error
    assert [(c.method, c.token) for c in slack_fake.calls] == [
        ("chat.frobnicate", slack_fake.bot_token),
        ("auth.test", None),
        ("auth.test", "xoxb-wrong"),
    ]
    assert slack_fake.calls[0].args == {"x": 1}
    async with aiohttp.ClientSession() as session:
        resp = await session.post(
            slack_fake.api_url + "chat.postMessage",
            data=b"{not json",
            headers={"Content-Type": "application/json", "Authorization": "Bearer x"},
        )
        assert (await resp.json())["error"] == "invalid_json"


async def test_fail_and_override_inject_errors(slack_fake: FakeSlack) -> None:
    client = _client(slack_fake)
    slack_fake.fail("chat.postMessage", "channel_is_archived")
    with pytest.raises(SlackApiError) as err:
        await client.chat_postMessage(channel="C0STUDY", text="x")
    assert err.value.response["error"] == "channel_is_archived"
    assert (await client.chat_postMessage(channel="C0STUDY", text="x"))["ok"]  # times=1
    slack_fake.fail("chat.update", "ratelimited", retry_after=7)
    with pytest.raises(SlackApiError) as err:  # no retry handler for 429 by default
        await client.chat_update(channel="C0STUDY", ts="1.2", text="x")
    assert (err.value.response.status_code, err.value.response.headers["Retry-After"]) == (429, "7")
    slack_fake.override("users.info", lambda call: {"ok": True, "user": {"id": call.args["user"]}})
    assert (await client.users_info(user="U9"))["user"] == {"id": "U9"}


async def test_response_url_effects(slack_fake: FakeSlack) -> None:
    client = _client(slack_fake)
    posted = await client.chat_postMessage(channel="C0STUDY", text="q", blocks=[BUTTON])
    click = slack_fake.block_action("go", message_ts=posted["ts"])
    url = click.response_url
    assert url is not None
    hook = AsyncWebhookClient(url)
    assert (await hook.send(text="only you")).status_code == 200
    assert (await hook.send(text="everyone", response_type="in_channel")).status_code == 200
    assert (await hook.send(text="replaced", replace_original=True)).status_code == 200
    assert [c.effect for c in slack_fake.response_url_calls] == [
        "ephemeral",
        "in_channel",
        "replace_original",
    ]
    assert slack_fake.message(posted["ts"]).text == "replaced"
    assert [m.text for m in slack_fake.channel_messages("C0STUDY")] == ["replaced", "everyone"]
    assert (await hook.send_dict({"delete_original": True})).status_code == 200
    assert slack_fake.message(posted["ts"]).deleted
    assert (await hook.send(text="fifth")).status_code == 200
    assert (await hook.send(text="sixth")).status_code == 404  # five uses, like Slack
    assert (await AsyncWebhookClient(url + "x").send(text="?")).status_code == 404
    assert [c.effect for c in slack_fake.response_url_calls][-2:] == ["rejected", "rejected"]
