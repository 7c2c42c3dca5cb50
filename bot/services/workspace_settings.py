"""``/settings``: the workspace's timezone, quiz window and points, viewed and changed in chat.

Anyone may look (a member should know when their day ends); only admins change, and every
change is logged with who and when (``/settings history``). A new timezone takes over at the
next local midnight of that zone, so today's streaks and this week's board finish where they
started; nothing already earned is rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from zoneinfo import ZoneInfo

from bot.core.clock import Clock
from bot.core.errors import BadInput, Forbidden
from bot.core.messages import Message, Section
from bot.core.models import ChatContext
from bot.core.requests import SettingsHistory, SettingShow, SettingsRequest
from bot.core.workspace_settings import (
    Setting,
    describe_window,
    next_local_midnight,
    parse_value,
)
from bot.services.audit import AuditLog
from bot.services.places import Places
from bot.storage.directory import Directory, WorkspaceRow
from bot.storage.exercises import ExerciseStore
from bot.storage.workspace_settings import SettingRecord, SettingsStore

__all__ = ["SettingShown", "WorkspaceSettingsService", "shown_value"]

_WHAT = {
    Setting.TIMEZONE: (
        "where days (streaks) and weeks (boards) begin, and the default for new schedules"
    ),
    Setting.QUIZ_WINDOW: "how long a question asked for with quiz stays open",
    Setting.POINTS_EASY: "points for a correct easy answer",
    Setting.POINTS_MEDIUM: "points for a correct medium answer",
    Setting.POINTS_HARD: "points for a correct hard answer",
    Setting.ROUND_QUESTIONS: "how many questions a live round asks unless its starter says",
    Setting.ROUND_SECONDS: "how long each question of a round stays open",
    Setting.ROUND_PAUSE: "the pause between a round's questions",
    Setting.ROUND_SPEED_BONUS: "whether faster right answers in a round score more (on|off)",
    Setting.ROUND_STARTERS: "who may start a round: everyone or admins",
    Setting.ROUND_TYPED: "whether a round asks typed questions too (on|off)",
    Setting.ROUND_SCORING: "how a round ranks: speed (faster right answers score more) or "
    "accuracy (speed only breaks ties)",
    Setting.REWARD_NOTICES: (
        "where a role reward given or taken back is announced: channel (the one it was added "
        "in) or dm (the member, privately; the channel when they take no DMs)"
    ),
    Setting.ANALYTICS: "whether admins may export each member's figures as a gradebook (on|off)",
    Setting.SHARE_SOLUTIONS: (
        "yours alone: whether /solutions shows your passing exercise solutions to others (on|off)"
    ),
}


@dataclass(frozen=True, slots=True)
class SettingShown:
    """One workspace setting as chat shows it: its value and what it does."""

    setting: Setting
    value: str
    what: str


_ON, _OFF = ("on", "yes", "true", "1"), ("off", "no", "false", "0")


class WorkspaceSettingsService:
    audit: AuditLog | None = None  # set by build_services: changes are recorded there

    def __init__(
        self,
        *,
        places: Places,
        directory: Directory,
        store: SettingsStore,
        clock: Clock,
        default_quiz_window: timedelta | None,
        exercises: ExerciseStore | None = None,
    ) -> None:
        self._exercises = exercises  # a member's own share-solutions choice
        self._places = places
        self._directory = directory
        self._store = store
        self._clock = clock
        self._default_window = default_quiz_window

    async def command(self, ctx: ChatContext, request: SettingsRequest) -> Message:
        """``settings [NAME [VALUE]]`` (changing is for admins), ``settings history``; a
        workspace setting's change is recorded in the audit log."""
        reply = await self._command(ctx, request)
        if isinstance(request, SettingShow | SettingsHistory) or self.audit is None:
            return reply
        if request.setting is not Setting.SHARE_SOLUTIONS:  # a member's own: not the workspace's
            await self.audit.record(ctx, "setting change", reply.plain_text())
        return reply

    async def _command(self, ctx: ChatContext, request: SettingsRequest) -> Message:
        workspace = await self._places.workspace(ctx)
        if isinstance(request, SettingsHistory):
            return _history(await self._store.history(workspace.id))
        if not isinstance(request, SettingsHistory) and request.setting is Setting.SHARE_SOLUTIONS:
            value = None if isinstance(request, SettingShow) else request.value
            return await self._sharing(ctx, workspace, value)
        if isinstance(request, SettingShow):
            setting = request.setting
            if setting is None:
                return self._listing(ctx, workspace)
            return Message.note(
                f"**{setting.value}**: {workspace.settings.shown(setting, self._default_window)} "
                f"— {_WHAT[setting]}. Change it with "
                f"{ctx.command(f'settings {setting.value} VALUE')} (admins)."
            )
        setting, value = request.setting, request.value
        if not ctx.is_admin:
            raise Forbidden(f"Only admins can change `{setting.value}`.")
        stored, warning = parse_value(setting, value)
        if setting is Setting.TIMEZONE:
            return await self._set_timezone(ctx, workspace, stored, warning)
        before = workspace.settings.shown(setting, self._default_window)
        await self._store.set_value(
            workspace.id,
            setting,
            stored,
            by=ctx.member,
            by_name=ctx.member_name,
            now=self._clock.now(),
        )
        updated = await self._directory.reload_workspace(workspace.id)
        after = updated.settings.shown(setting, self._default_window)
        if setting is Setting.QUIZ_WINDOW:
            note = "Questions asked from now on close after it; open ones keep their closing time."
        elif setting.value.startswith("round-"):
            note = "Rounds started from now on follow it; a running round keeps its own."
        elif setting is Setting.REWARD_NOTICES:
            note = "Role rewards given or taken back from now on are announced there."
        elif setting is Setting.ANALYTICS:
            note = "It decides whether admins may export each member's figures."
        else:
            note = "Answers from now on score it; points already earned stay as they are."
        return Message.note(f"✅ **{setting.value}**: {before} → **{after}**. {note}")

    async def values(
        self, ctx: ChatContext, settings: tuple[Setting, ...] = tuple(Setting)
    ) -> list[SettingShown]:
        """The workspace's settings as ``settings`` lists them (data: the admin page's form)."""
        workspace = await self._places.workspace(ctx)
        shown = workspace.settings.shown
        return [
            SettingShown(s, shown(s, self._default_window), _WHAT[s])
            for s in settings
            if s is not Setting.SHARE_SOLUTIONS
        ]

    async def changes(self, ctx: ChatContext) -> list[SettingRecord]:
        """The latest changes, newest first (data: ``settings history`` and the admin page)."""
        workspace = await self._places.workspace(ctx)
        return await self._store.history(workspace.id)

    async def _sharing(
        self, ctx: ChatContext, workspace: WorkspaceRow, typed: str | None
    ) -> Message:
        """``settings share-solutions [on|off]``: each member's own, no admin needed."""
        if self._exercises is None:
            raise BadInput("Exercises are not kept here.")
        member = await self._directory.member(
            workspace, ctx.member, ctx.member_name, self._clock.now()
        )
        if typed is None:
            shared = await self._exercises.sharing(member.id)
            state = "on: others see your passing solutions" if shared else "off"
            return Message.note(
                f"**share-solutions** (yours): {state}. Change it with "
                f"{ctx.command('settings share-solutions on|off')}."
            )
        word = typed.strip().lower()
        if word not in (*_ON, *_OFF):
            raise BadInput(f"`share-solutions` is on or off, not `{typed.strip()[:20]}`.")
        share = word in _ON
        await self._exercises.set_sharing(member.id, share)
        if share:
            return Message.note(
                "✅ **share-solutions**: on. /solutions shows your shortest passing solution "
                "to an exercise to members who solved it or once it closes."
            )
        return Message.note("✅ **share-solutions**: off. /solutions no longer shows yours.")

    async def _set_timezone(
        self, ctx: ChatContext, workspace: WorkspaceRow, new: str, warning: str | None
    ) -> Message:
        now = self._clock.now()
        current = workspace.settings.zone_name_at(now)
        if new == workspace.timezone and new == current:
            return Message.note(f"The timezone is already **{new}**.")
        new_zone = ZoneInfo(new)
        takes_over = next_local_midnight(now, new_zone)
        old = await self._store.set_timezone(
            workspace.id,
            new,
            in_force_now=current,
            takes_over=takes_over,
            by=ctx.member,
            by_name=ctx.member_name,
            now=now,
        )
        await self._directory.reload_workspace(workspace.id)
        local = takes_over.astimezone(new_zone)
        lines = [
            f"✅ **timezone**: {old} → **{new}**.",
            f"Days and weeks follow {new} from {local:%a %d %b %H:%M} ({new}); until then they "
            f"end as before ({current}). Streaks and points already earned stay as they are.",
            "New schedules default to it; existing schedules keep the timezone they were "
            "created with.",
        ]
        if warning:
            lines.append(f"⚠️ {warning}.")
        return Message.note("\n".join(lines))

    def _listing(self, ctx: ChatContext, workspace: WorkspaceRow) -> Message:
        now = self._clock.now()
        settings = workspace.settings
        lines = []
        for setting in Setting:
            shown = settings.shown(setting, self._default_window)
            lines.append(f"**{setting.value}**: {shown} — {_WHAT[setting]}")
        pending = settings.zone_name_at(now)
        if pending != settings.timezone and settings.timezone_from is not None:
            local = settings.timezone_from.astimezone(settings.zone_at(settings.timezone_from))
            lines.append(
                f"(until {local:%a %d %b %H:%M} {settings.timezone}, days still end in {pending})"
            )
        footer = (
            f"Change one with {ctx.command('settings NAME VALUE')} (admins), e.g. "
            f"{ctx.command('settings timezone Europe/Berlin')}; "
            f"{ctx.command('settings history')} shows who changed what."
        )
        return Message(
            title="⚙️ Settings of this workspace",
            sections=(Section(body="\n".join(lines)), Section(body=footer)),
            ephemeral=True,
        )


def _history(changes: list[SettingRecord]) -> Message:
    if not changes:
        return Message.note("No setting has been changed here yet: all are the bot's defaults.")
    lines = [
        f"{c.changed_at:%Y-%m-%d %H:%M} UTC · **{c.setting}**: "
        f"{shown_value(c.setting, c.old_value)} → {shown_value(c.setting, c.new_value)} "
        f"by {c.changed_by_name}"
        for c in changes
    ]
    return Message(
        title="⚙️ Setting changes, newest first",
        sections=(Section(body="\n".join(lines)),),
        ephemeral=True,
    )


def shown_value(setting: str, value: str | None) -> str:
    """A stored value as chat and the admin page show it (a quiz window of 2700 is 45m)."""
    if value is None:
        return "default"
    if setting == Setting.QUIZ_WINDOW.value:
        return describe_window(timedelta(seconds=int(value)))
    return value
