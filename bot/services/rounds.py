"""Live rounds: a timed game of questions in one channel (``/round start``).

A round is a feature on the quiz, not a fork of it: each question is an ordinary post with
its ``round_id`` set, so answers, "first click counts", late refusals and the reveal at the
deadline are the quiz's own (:mod:`bot.services.quiz` scores a round's correct answer with the
speed bonus and the hints taken, :mod:`bot.core.rounds`). What this service adds is the
sequence: the round row says which question is next and when, and the one timer loop runs
:meth:`Rounds.deliver` through :meth:`Rounds.due_source` when it is due. Each step is claimed
in the database before anything is sent (:meth:`RoundStore.claim_step`), so a restart resumes
at the question it was on and two processes never ask the same question.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from bot.core.accommodations import Accommodation, own_deadline
from bot.core.clock import Clock
from bot.core.errors import BadInput, Forbidden, NotFound
from bot.core.gateway import ChatGateway, RoleReader, serves
from bot.core.messages import Attachment, Message, Section, escape_markup
from bot.core.models import ChatContext
from bot.core.requests import RoundRequest, RoundSkip, RoundStart
from bot.core.rounds import QUIET_LIMIT, RoundSpec, Scoring, check_team_roles, team_names
from bot.core.schedule_spec import ScheduleError, parse_filters
from bot.core.scoring import period_keys
from bot.core.srs import Grade
from bot.core.wakeup import Wakeup
from bot.core.workspace_settings import next_local_midnight
from bot.log import get_logger
from bot.services.catalogue import Catalogue
from bot.services.places import Places
from bot.services.posting import Posting
from bot.services.roundchart import BoardBar, draw_round_board
from bot.services.schedule_book import Schedule
from bot.services.timed import PlannedWork
from bot.storage.accommodations import AccommodationStore
from bot.storage.directory import ChannelRow, Directory, WorkspaceRow
from bot.storage.reviews import ReviewItem, ReviewStore
from bot.storage.rounds import BoardRow, Round, RoundExists, RoundStore

__all__ = ["Rounds"]

log = get_logger(__name__)

READY = timedelta(seconds=3)
"""From the announcement to the first question: the announcement is the start command's reply,
sent after it returns, and it must come first; and a group likes a moment to get ready."""
_SETTLE = timedelta(seconds=1)
"""The board follows the last question's reveal by at least this much (the reveal goes out
first at its deadline)."""


class Rounds:
    """Starts, steps and ends live rounds; their board."""

    # Set by build_services: members' extra time keeps a question open for them (None: no
    # accommodations, as in tests that build the service alone).
    accommodations: AccommodationStore | None = None

    def __init__(
        self,
        *,
        places: Places,
        directory: Directory,
        catalogue: Catalogue,
        posting: Posting,
        store: RoundStore,
        reviews: ReviewStore,
        clock: Clock,
        wakeup: Wakeup,
    ) -> None:
        self._reviews = reviews  # a question missed in a round comes back in /review
        self._places = places
        self._directory = directory
        self._catalogue = catalogue
        self._posting = posting
        self._store = store
        self._clock = clock
        self._wakeup = wakeup  # a round started or stopped re-plans the timer

    # --- commands ----------------------------------------------------------------------------

    async def command(
        self, ctx: ChatContext, request: RoundRequest, gateway: ChatGateway | None = None
    ) -> Message:
        """``round start ...``, ``round stop`` or ``round skip``; ``gateway`` finds the roles
        ``round start --teams @red,@blue`` names."""
        if isinstance(request, RoundStart):
            return await self.start(ctx, request, gateway)
        if isinstance(request, RoundSkip):
            return await self.skip(ctx)
        return await self.stop(ctx)

    async def start(
        self, ctx: ChatContext, request: RoundStart, gateway: ChatGateway | None = None
    ) -> Message:
        """Create the round; its first question follows at once, from the timer loop."""
        workspace, channel = await self._places.channel(ctx)
        if workspace.settings.rounds_for_admins_only and not ctx.is_admin:
            raise Forbidden(
                "Only admins start rounds here (an admin set "
                f"{ctx.command('settings round-starters admins')})."
            )
        default = workspace.settings.round_spec()
        spec = RoundSpec(
            questions=_given(request.questions, default.questions),
            seconds=_given(request.seconds, default.seconds),
            pause=default.pause,
            speed_bonus=default.speed_bonus,
            typed=default.typed,
            scoring=default.scoring if request.scoring is None else Scoring.named(request.scoring),
            teams=len(request.team_roles) if request.team_roles else (request.teams or 0),
            talk=0 if request.talk is None else request.talk,
        )
        if request.teams is not None and not spec.teams:
            raise BadInput(f"A team round has 2 to 8 teams, not {request.teams}.")
        roles = await _team_roles(ctx, request, gateway)
        try:
            difficulty, tags = parse_filters(request.difficulty, request.tags)
        except ScheduleError as exc:
            raise BadInput(f"{exc.field}: {exc.reason}.") from None
        if request.pack is not None:
            self._posting.check_pack(request.pack)  # "did you mean" for a mistyped pack
        try:
            questions = await self._open(
                workspace.id,
                channel.id,
                spec,
                started_by=ctx.member,
                starter_name=ctx.member_name,
                pack=request.pack.lower() if request.pack else None,
                difficulty=difficulty,
                tags=tags,
                now=self._clock.now(),
                team_roles=roles,
            )
        except RoundExists:
            raise BadInput(
                f"A round is already running here; {ctx.command('round stop')} ends it "
                "(whoever started it, or an admin)."
            ) from None
        fewer = (
            f" Only {_count(questions)} match, so the round has {questions}."
            if questions < spec.questions
            else ""
        )
        if spec.scoring is Scoring.ACCURACY:
            bonus = " Accuracy first: every right answer scores its points, and speed only "
            bonus += "breaks ties;"
        else:
            bonus = " Faster correct answers score more (up to +50 %);" if spec.speed_bonus else ""
        skip = ctx.command("round skip")
        if spec.teams:
            names = ", ".join(team_names(spec.teams, [escape_markup(n) for _, n in roles]))
            joining = (
                "you play for the first of these roles you hold"
                if roles
                else "you join one with your first answer"
            )
            bonus += (
                f" **{spec.teams} teams** ({names}): {joining}, and a team scores its players' "
                "mean, so its size gives no edge;"
            )
            if spec.talk:
                bonus += f" each question follows a {spec.talk} s team talk;"
        return Message(
            title=f"🏁 A round of {_count(questions)} starts now",
            sections=(
                Section(
                    body=f"{spec.seconds} s per question, then the answer.{bonus} each hint "
                    f"costs a quarter of the points.{fewer} Players can vote to skip a "
                    f"question with {skip}."
                ),
            ),
            footer=f"Started by {escape_markup(ctx.member_name)}. "
            f"{ctx.command('round stop')} ends it early.",
        )

    async def start_scheduled(
        self,
        workspace: WorkspaceRow,
        channel: ChannelRow,
        schedule: Schedule,
        occurrence: str,
        now: datetime,
    ) -> Message | None:
        """A schedule's round (``schedule add --round 10x20s``) at its occurrence: the
        announcement to post, or None when there is nothing to start (this occurrence started
        already, a round is running in the channel, or no question matches; logged)."""
        spec = schedule.spec
        assert spec.round is not None
        wanted, seconds = spec.round
        default = workspace.settings.round_spec()
        try:
            questions = await self._open(
                workspace.id,
                channel.id,
                replace(default, questions=wanted, seconds=seconds),
                started_by="schedule",
                starter_name=f"schedule #{schedule.id}",
                pack=spec.pack,
                difficulty=spec.difficulty,
                tags=spec.tags,
                now=now,
                schedule_id=schedule.id,
                occurrence=occurrence,
            )
        except NotFound:
            log.warning("schedule %d: no round questions match; no round started", schedule.id)
            return None
        except RoundExists:
            log.info(
                "schedule %d: no round at %s (started already, or one is running there)",
                schedule.id,
                occurrence,
            )
            return None
        return Message(
            title=f"🏁 A round of {_count(questions)} starts now",
            sections=(
                Section(
                    body=f"{seconds} s per question, then the answer."
                    + (" Faster correct answers score more." if default.speed_bonus else "")
                ),
            ),
            footer=f"Scheduled (#{schedule.id}). An admin can end it early with `round stop`.",
            mention=spec.mention,
        )

    async def _open(
        self,
        workspace_id: int,
        channel_id: int,
        spec: RoundSpec,
        *,
        started_by: str,
        starter_name: str,
        pack: str | None,
        difficulty: str | None,
        tags: tuple[str, ...],
        now: datetime,
        schedule_id: int | None = None,
        occurrence: str | None = None,
        team_roles: Sequence[tuple[str, str]] = (),
    ) -> int:
        """Store a new round of at most ``spec.questions`` (as many as match), its first
        question due after :data:`READY`, and wake the timer; how many questions it has.
        :class:`NotFound` if no question matches, :class:`RoundExists` if the channel (or this
        schedule occurrence) has one already."""
        found = await self._catalogue.candidates(
            channel_id, pack=pack, difficulty=difficulty, tags=tags, kinds=spec.kinds
        )
        if not found:
            typed = ", practice or typed" if spec.typed else " or practice"
            raise NotFound(
                f"No multiple-choice{typed} questions match that here (a round asks only "
                "questions answered by a click or typed). Try `pack list`."
            )
        questions = min(spec.questions, len(found))
        await self._store.create(
            workspace_id=workspace_id,
            channel_id=channel_id,
            started_by=started_by,
            starter_name=starter_name,
            pack=pack,
            difficulty=difficulty,
            tags=tags,
            questions=questions,
            seconds=spec.seconds,
            pause=spec.pause,
            speed_bonus=spec.speed_bonus,
            scoring=spec.scoring,
            teams=spec.teams,
            talk=spec.talk,
            team_roles=team_roles,
            now=now,
            due_at=now + READY,
            schedule_id=schedule_id,
            occurrence=occurrence,
        )
        self._wakeup.timing_changed()  # the first question is due in a moment
        return questions

    async def stop(self, ctx: ChatContext) -> Message:
        """End the round here early (its starter or an admin) with the board so far."""
        _, channel = await self._places.channel(ctx)
        found = await self._store.running_in(channel.id)
        if found is None:
            raise NotFound("No round is running here.")
        if not ctx.is_admin and ctx.member != found.started_by:
            raise Forbidden("Only whoever started the round, or an admin, can stop it.")
        note = f"Stopped by {ctx.member_name} after {found.step} of {found.questions} questions."
        if not await self._store.end(found.id, self._clock.now(), note):
            raise NotFound("That round has just ended.")
        await self._queue_missed(found, self._clock.now())
        self._wakeup.timing_changed()
        return await self.board_message(found, channel, note)

    async def skip(self, ctx: ChatContext) -> Message:
        """A player's vote to skip the open question. It is skipped when more than half of
        the members who answered the previous question (the first question: who answered it
        so far) have voted: revealed at once, it scores nothing, and the round goes on after
        its pause. Votes are rows, so a restart or another process counts the same ones."""
        workspace, channel = await self._places.channel(ctx)
        found = await self._store.running_in(channel.id)
        if found is None:
            raise NotFound("No round is running here.")
        now = self._clock.now()
        asked = await self._store.post_ids(found.id)
        current = await self._store.open_question(found.id, now)
        if current is None:
            raise BadInput("No question is open to skip: the next one is on its way.")
        member = await self._directory.member(workspace, ctx.member, ctx.member_name, now)
        if member.id not in await self._store.answerers(asked):
            raise Forbidden("Only players vote to skip: answer a question of this round first.")
        # Who decides: the previous question's players (nobody answered it, or this is the
        # first: this one's so far, the voter among them).
        voters = await self._store.answerers(asked[-2:-1]) or await self._store.answerers(
            asked[-1:]
        )
        needed = len(voters) // 2 + 1
        votes = await self._store.vote_skip(current, member.id, now)
        step = len(asked)
        if votes < needed:
            return Message.note(
                f"⏭ Your vote to skip question {step} is in: {votes} of the {needed} needed."
            )
        skipped = await self._store.skip(
            found,
            current,
            now,
            lambda at: period_keys(at, workspace.zone_at(at)),
            now + max(found.spec.gap, _SETTLE),
        )
        if not skipped:
            raise BadInput("That question has just closed.")
        self._wakeup.timing_changed()  # the reveal is due now, the next question after it
        return Message(
            title=f"⏭ Question {step} is skipped",
            sections=(
                Section(
                    body=f"{votes} players voted to skip it ({needed} were needed). Its answer "
                    "is shown now, and it scores nothing."
                ),
            ),
        )

    # --- the timer's steps ---------------------------------------------------------------------

    async def deliver(self, gateway: ChatGateway) -> int:
        """Take every round step that is due: the next question, or the board at the end."""
        now = self._clock.now()
        done = 0
        for found in await self._store.due(now):
            try:
                done += await self._step(gateway, found, now)
            except Exception:
                log.exception("live round %d: a step failed", found.id)
        return done

    async def _step(self, gateway: ChatGateway, found: Round, now: datetime) -> int:
        workspace = await self._directory.workspace_by_id(found.workspace_id)
        if not serves(gateway, workspace.external_id):
            return 0  # another process's (a workspace on another shard)
        channel = await self._directory.channel_by_id(found.channel_id)
        spec = found.spec
        window, gap = spec.window, max(spec.gap, _SETTLE)
        # Members' extra time, read once: it stretches the offline check and the question.
        extra = (
            {} if self.accommodations is None else await self.accommodations.of(found.workspace_id)
        )
        stretch = max((a.time_factor for a in extra.values()), default=1.0)
        if now - found.started_at > spec.longest(least_gap=_SETTLE, stretch=stretch):
            note = "The bot was offline longer than the round would have lasted."
            return await self._finish(gateway, found, channel, now, note)
        if found.step >= found.questions:
            return await self._finish(gateway, found, channel, now, None)
        asked = await self._store.post_ids(found.id)
        if len(asked) >= QUIET_LIMIT and await self._store.answers_to(asked[-QUIET_LIMIT:]) == 0:
            note = f"Nobody answered {QUIET_LIMIT} questions in a row, so the round ended itself."
            return await self._finish(gateway, found, channel, now, note)
        if found.talk and found.talked <= found.step:
            return await self._talk(gateway, found, channel, now)
        deadline = now + window
        closes = await self._extended(found, now, window, extra)  # accommodated players' time
        last = found.step + 1 >= found.questions
        if not await self._store.claim_step(found, closes + (_SETTLE if last else gap)):
            return 0  # another process took this step
        try:
            draft = await self._posting.post_in(
                workspace,
                channel,
                pack=found.pack,
                difficulty=found.difficulty,
                tags=found.tags,
                kinds=workspace.settings.round_spec().kinds,  # round-typed, as it is now
                closes_at=closes,
                round_id=found.id,
            )
        except NotFound:
            note = "No more questions match this round's filters."
            return await self._finish(gateway, found, channel, now, note)
        assert draft is not None  # no occurrence key: nothing to collide on
        heading = f"🏁 Question {found.step + 1} of {found.questions}"
        tz = workspace.display_zone
        footer = (
            f"{found.seconds} s to answer, until {deadline.astimezone(tz):%H:%M:%S} "
            f"({tz.key}); only your first click counts. · #{draft.post.id}"
        )
        title = f"{heading} · {draft.message.title}" if draft.message.title else heading
        draft = replace(draft, message=replace(draft.message, title=title, footer=footer))
        await self._posting.publish(draft, gateway)
        return 1

    async def _extended(
        self, found: Round, now: datetime, window: timedelta, extra: dict[int, Accommodation]
    ) -> datetime:
        """When the next question closes: its window, stretched to the longest extra time of
        the accommodated players it waits for (see
        :func:`~bot.services.round_rules.accommodated_players`). Everyone else keeps the
        usual deadline, which the question's footer shows; nothing public says who has more."""
        if not any(a.time_factor > 1 for a in extra.values()):
            return now + window
        asked = await self._store.post_ids(found.id)
        players = await self._store.answerers(asked) if asked else None
        factor = max(
            (a.time_factor for member, a in extra.items() if players is None or member in players),
            default=1.0,
        )
        return own_deadline(now, window, factor)

    async def _talk(
        self, gateway: ChatGateway, found: Round, channel: ChannelRow, now: datetime
    ) -> int:
        """A team round's talk before its next question: who is on which team, and when the
        question comes; the question itself is due once the talk is over."""
        if not await self._store.claim_talk(found, now + timedelta(seconds=found.talk)):
            return 0  # another process announced it
        rosters = await self._store.rosters(found.id)
        lines = [
            f"{escape_markup(found.team_names[team])}: {', '.join(escape_markup(n) for n in names)}"
            for team, names in sorted(rosters.items())
        ]
        nobody = (
            "Nobody has answered yet: you play for the team of your role."
            if found.team_roles
            else "Nobody is on a team yet: you join one with your first answer."
        )
        body = "\n".join(lines) or nobody
        await gateway.send_post(
            channel.external_id,
            Message(
                title=f"🗣 Team talk: question {found.step + 1} of {found.questions} in "
                f"{found.talk} s",
                sections=(Section(body=body),),
                footer="Agree on your answer with your team; each of you then answers.",
            ),
        )
        return 1

    async def _finish(
        self,
        gateway: ChatGateway,
        found: Round,
        channel: ChannelRow,
        now: datetime,
        note: str | None,
    ) -> int:
        if not await self._store.end(found.id, now, note):
            return 0  # ended already (stopped, or by another process)
        await self._queue_missed(found, now)
        await gateway.send_post(channel.external_id, await self.board_message(found, channel, note))
        return 1

    async def _queue_missed(self, found: Round, now: datetime) -> None:
        """Every question a player got wrong or let pass comes back in their /review the next
        (local) day: a miss is recorded as forgotten (a wrong answer was, when it was given),
        and both are held until the workspace's next midnight."""
        workspace = await self._directory.workspace_by_id(found.workspace_id)
        tomorrow = next_local_midnight(now, workspace.zone_at(now))
        missed = await self._store.missed(found.id)
        for member_id, question_id in missed:
            await self._reviews.record(
                ReviewItem(found.workspace_id, member_id, question_id, Grade.AGAIN, now)
            )
        for member_id, question_id in [*missed, *await self._store.wrong(found.id)]:
            await self._reviews.hold(member_id, question_id, tomorrow)

    async def next_time(self, now: datetime) -> datetime | None:
        """When the next round step is due (the timer wakes then)."""
        return await self._store.next_due()

    def due_source(self, gateway: ChatGateway) -> PlannedWork:
        """The running rounds as timed work: due at the soonest next step of any of them."""

        async def deliver() -> int:
            return await self.deliver(gateway)

        return PlannedWork("live rounds", deliver, self.next_time)

    # --- the board ---------------------------------------------------------------------------

    async def board_message(self, found: Round, channel: ChannelRow, note: str | None) -> Message:
        """The round's board: ranks, points, correct answers, the fastest correct answer, and
        who improved most on their last round here."""
        rows = await self._store.board(found.id, found.scoring)
        asked = len(await self._store.post_ids(found.id, counted=True))
        accuracy = found.scoring is Scoring.ACCURACY
        lines = _board_lines(rows, asked, accuracy=accuracy)
        sections = [Section(body=lines or "Nobody answered this round.")]
        if accuracy and rows:
            sections.append(
                Section(
                    body="Accuracy first: equal points are ranked by the time taken on the "
                    "right answers, in all."
                )
            )
        before = await self._store.previous_points(found, [r.member_id for r in rows])
        gains = [(r.points - before[r.member_id], r) for r in rows if r.member_id in before]
        best = max(gains, key=lambda g: (g[0], -len(g[1].name)), default=None)
        if best is not None and best[0] > 0:
            sections.append(
                Section(
                    heading="Most improved",
                    body=f"{escape_markup(best[1].name)}: +{best[0]} on their last round here",
                )
            )
        if rows:
            sections.append(
                Section(
                    body="Every question you got wrong or let pass is in your `/review` queue "
                    "from tomorrow."
                )
            )
        teams = await self._store.teams_of(found.id) if found.teams else {}
        standings = _team_standings(rows, teams, found.team_names)
        if standings:
            sections.insert(0, Section(heading="Teams", body=_team_lines(standings, asked)))
        if note:
            sections.append(Section(body=note))
        where = f"#{channel.name or channel.external_id}"
        picture = await asyncio.to_thread(
            draw_round_board,
            f"Round board, {where}: {asked} question{'s' if asked != 1 else ''}",
            [
                BoardBar(
                    r.name,
                    r.points,
                    r.correct,
                    asked,  # out of the questions asked, as the text says
                    None if r.fastest is None else r.fastest.total_seconds(),
                )
                for r in rows
            ],
        )
        attachments = [
            Attachment("round-board.png", picture, f"The round board of {where}", is_image=True)
        ]
        if standings:
            drawn = await asyncio.to_thread(
                draw_round_board,
                f"Team board, {where}: mean points a player",
                [
                    BoardBar(
                        f"{team.name.split(maxsplit=1)[-1]} ({team.players})",
                        round(team.mean),
                        team.correct,
                        asked * team.players,
                        None,
                    )
                    for team in standings
                ],
            )
            alt = (
                "The team board of "
                + where
                + ": "
                + "; ".join(
                    f"{t.name.split(maxsplit=1)[-1]} {t.mean:.1f} points a player"
                    for t in standings
                )
            )
            attachments.insert(0, Attachment("team-board.png", drawn, alt, is_image=True))
        return Message(
            title=f"🏁 Round board — {where}",
            sections=tuple(sections),
            footer=f"{asked} of {found.questions} questions · started by "
            f"{escape_markup(found.starter_name)}",
            attachments=tuple(attachments),
        )


def _board_lines(rows: list[BoardRow], asked: int, *, accuracy: bool = False) -> str:
    """One line per player; "2/3 right" counts the questions the round asked (not the skipped
    ones), so a question let pass counts against the player as a wrong one does. Accuracy
    first ranks equal points by the right answers' time: only equal times share a rank."""
    medals = {1: "🥇", 2: "🥈", 3: "🥉"}
    lines = []
    rank, previous = 0, None
    for index, row in enumerate(rows, start=1):
        standing = (row.points, row.took) if accuracy else (row.points, None)
        if standing != previous:
            rank, previous = index, standing
        medal = medals.get(rank, f"{rank}.") if row.points > 0 else f"{rank}."
        if accuracy and row.correct:
            fastest = f" · {row.took.total_seconds():.1f} s on right answers"
        elif row.fastest is not None:
            fastest = f" · fastest {row.fastest.total_seconds():.1f} s"
        else:
            fastest = ""
        lines.append(
            f"{medal} **{escape_markup(row.name)}** — {row.points} pts · "
            f"{row.correct}/{asked} right{fastest}"
        )
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class TeamStanding:
    """One team at the end: its players, their points and right answers, and the mean."""

    name: str
    players: int
    points: int
    correct: int

    @property
    def mean(self) -> float:
        return self.points / self.players if self.players else 0.0


def _team_standings(
    rows: list[BoardRow], teams: dict[int, int], names: Sequence[str]
) -> list[TeamStanding]:
    """Each team with players, best mean first (a team's size gives it no edge)."""
    count = len(names)
    if not count:
        return []
    players, points, correct = [0] * count, [0] * count, [0] * count
    for row in rows:
        team = teams.get(row.member_id)
        if team is None:
            continue
        players[team] += 1
        points[team] += row.points
        correct[team] += row.correct
    found = [
        TeamStanding(names[t], players[t], points[t], correct[t])
        for t in range(count)
        if players[t]
    ]
    return sorted(found, key=lambda t: (-t.mean, t.name))


def _team_lines(standings: list[TeamStanding], asked: int) -> str:
    medals = {1: "🥇", 2: "🥈", 3: "🥉"}
    lines, rank, previous = [], 0, None
    for index, team in enumerate(standings, start=1):
        if team.mean != previous:
            rank, previous = index, team.mean
        medal = medals.get(rank, f"{rank}.")
        lines.append(
            f"{medal} **{escape_markup(team.name)}** — {team.mean:.1f} pts a player · "
            f"{team.players} player{'s' if team.players != 1 else ''} · {team.correct}/"
            f"{asked * team.players} right"
        )
    return "\n".join(lines)


def _given(value: int | None, default: int) -> int:
    """The number asked for (0 too, which the round's rule then refuses), else the default."""
    return default if value is None else value


def _count(questions: int) -> str:
    return f"{questions} question{'s' if questions != 1 else ''}"


async def _team_roles(
    ctx: ChatContext, request: RoundStart, gateway: object
) -> tuple[tuple[str, str], ...]:
    """The roles ``--teams @red,@blue`` names, found in the workspace: (id, shown name) per
    team. An unknown role, too few or too many, or a chat without roles is refused in one
    line, before anything is stored."""
    if not request.team_roles:
        return ()
    typed = check_team_roles(request.team_roles)
    if not isinstance(gateway, RoleReader):
        raise BadInput("Teams from roles need a chat with roles: use --teams N here.")
    found: list[tuple[str, str]] = []
    for word in typed:
        role = await gateway.find_role(ctx.workspace, word)
        if role is None:
            shown = word.replace("`", "'")[:60]
            raise BadInput(f"There is no role `{shown}` here, so no team can be made of it.")
        if role[0] in {r for r, _ in found}:
            shown = word.replace("`", "'")[:60]
            raise BadInput(f"`{shown}` is named twice: each team is a different role.")
        found.append(role)
    return tuple(found)
