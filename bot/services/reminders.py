"""``/review remind 19:00 [TZ]``: a private DM at that local time on days with due cards.

A reminder is only ever a direct message (never a channel post). If the member does not take
DMs, the reminder turns itself off and the member is told the next time they use /review.
:meth:`Reminders.due_source` is the timed work the scheduler runs when the platform's gateway can
send DMs (:class:`bot.core.gateway.DirectMessenger`).
"""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.core.clock import Clock
from bot.core.errors import BadInput
from bot.core.gateway import DirectMessenger, serves
from bot.core.messages import Message
from bot.core.models import ChatContext
from bot.core.requests import RemindOff, RemindRequest, RemindShow
from bot.core.wakeup import Wakeup
from bot.log import get_logger
from bot.services.places import Places
from bot.services.timed import PlannedWork
from bot.storage.directory import Directory
from bot.storage.reminders import Reminder, ReminderStore
from bot.storage.reviews import ReviewStore

__all__ = ["Reminders"]

log = get_logger(__name__)
_TIME = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
DM_CLOSED = "dm_closed"


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise BadInput(
            f"`{name}` is not a time zone; use an IANA name like Europe/Berlin."
        ) from None


class Reminders:
    def __init__(
        self,
        *,
        places: Places,
        directory: Directory,
        reviews: ReviewStore,
        store: ReminderStore,
        clock: Clock,
        wakeup: Wakeup,
    ) -> None:
        self._places = places
        self._directory = directory
        self._reviews = reviews
        self._store = store
        self._clock = clock
        self._wakeup = wakeup  # a reminder set or turned off re-plans the timer

    async def command(self, ctx: ChatContext, request: RemindRequest) -> Message:
        """``remind HH:MM [TZ]``, ``remind off``, or ``remind`` alone (what is set)."""
        workspace = await self._places.workspace(ctx)
        now = self._clock.now()
        member = await self._directory.member(workspace, ctx.member, ctx.member_name, now)
        if isinstance(request, RemindShow):
            current = await self._store.get(member.id)
            if current is None or not current.enabled:
                usage = f"{ctx.command('review remind HH:MM [TZ]')} or `off`"
                text = f"No review reminder is set. {usage}."
            else:
                text = f"Your review reminder: {current.local_time} ({current.timezone}) by DM."
            return Message.note(text)
        if isinstance(request, RemindOff):
            was_on = await self._store.turn_off(member.id)
            self._wakeup.timing_changed()
            return Message.note(
                "Review reminders are off." if was_on else "You had no review reminder on."
            )
        tz = _zone(request.timezone or workspace.timezone)
        at = request.at
        local_time = f"{at:%H:%M}"
        local_now = now.astimezone(tz)
        # Already past that time today: the first reminder is tomorrow's.
        handled = local_now.date() if local_now.time() >= at else local_now.date() - timedelta(1)
        await self._store.set(member.id, local_time, tz.key, handled)
        self._wakeup.timing_changed()
        return Message.note(
            f"I'll DM you at {local_time} ({tz.key}) on days when you have cards due. "
            f"Turn it off with {ctx.command('review remind off')}."
        )

    async def notice(self, ctx: ChatContext) -> Message | None:
        """Once: "your reminder turned itself off" (DMs were closed), for the next /review."""
        workspace = await self._places.workspace(ctx)
        member = self._directory.cached_member(workspace.id, ctx.member)
        if member is None:
            member = await self._directory.find_member(workspace.id, ctx.member)
        if member is None:
            return None
        reminder = await self._store.get(member.id)
        if reminder is None or reminder.told or reminder.off_reason != DM_CLOSED:
            return None
        await self._store.mark_told(member.id)
        return Message.note(
            "Your review reminder turned itself off: I couldn't send you a direct message. "
            f"Allow DMs from this server's members, then set it again with "
            f"{ctx.command('review remind HH:MM')}."
        )

    def _falls_due(self, reminder: Reminder, now: datetime) -> datetime | None:
        """The local day's reminder time if it has come and that day is not yet handled."""
        tz = ZoneInfo(reminder.timezone)
        local = now.astimezone(tz)
        hour, minute = (int(part) for part in reminder.local_time.split(":"))
        if local.time() < time(hour, minute):
            return None
        if reminder.last_sent_day is not None and reminder.last_sent_day >= local.date():
            return None
        return local

    async def deliver(self, gateway: DirectMessenger) -> int:
        """Send every reminder whose time has come; return how many DMs were sent."""
        now = self._clock.now()
        sent = 0
        for reminder in await self._store.enabled():
            local = self._falls_due(reminder, now)
            if local is None:
                continue
            workspace = await self._directory.workspace_by_id(reminder.workspace_id)
            if not serves(gateway, workspace.external_id):
                continue  # another process's (a guild on another shard)
            if not await self._store.claim_day(reminder.member_id, local.date()):
                continue  # handled today already, here or by another process
            due = await self._reviews.due_count(reminder.workspace_id, reminder.member_id, now)
            if due == 0:
                continue
            message = Message.note(
                f"🔁 You have {due} card{'s' if due != 1 else ''} due for review. "
                "Use /review when you have a few minutes."
            )
            try:
                ok = await gateway.send_dm(workspace.external_id, reminder.member_external, message)
            except Exception:
                log.exception("review reminder DM to member %d failed", reminder.member_id)
                continue  # a platform hiccup: tomorrow is another day
            if ok:
                sent += 1
            else:
                await self._store.turn_off(reminder.member_id, DM_CLOSED)
        return sent

    async def next_time(self, gateway: DirectMessenger, now: datetime) -> datetime | None:
        """The soonest instant after ``now`` at which a reminder this process serves is due:
        today's local time if today is not handled yet, else tomorrow's."""
        found: list[datetime] = []
        for reminder in await self._store.enabled():
            workspace = await self._directory.workspace_by_id(reminder.workspace_id)
            if not serves(gateway, workspace.external_id):
                continue
            tz = ZoneInfo(reminder.timezone)
            local = now.astimezone(tz)
            hour, minute = (int(part) for part in reminder.local_time.split(":"))
            day = local.date()
            if reminder.last_sent_day is not None and reminder.last_sent_day >= day:
                day += timedelta(days=1)
            at = datetime.combine(day, time(hour, minute), tz)
            found.append(at if at > now else datetime.combine(day + timedelta(1), at.time(), tz))
        return min(found, default=None)

    def due_source(self, gateway: DirectMessenger) -> PlannedWork:
        """The reminders as timed work for the scheduler, sent as DMs through ``gateway``:
        due at the soonest reminder time; each member's day is claimed before the DM."""
        return PlannedWork(
            "review reminders",
            lambda: self.deliver(gateway),
            lambda now: self.next_time(gateway, now),
        )
