"""Questions, matches, players and the durable match record (event log and buzz log).

Shapes and names follow QUIZBOWL.md: a *tossup* is read word by word, a *token index*
is 0-based, a *buzz* row is written before the buzz is acknowledged.
"""

from __future__ import annotations

import hashlib
import secrets
from enum import StrEnum

from django.conf import settings
from django.db import IntegrityError, models, transaction
from django.db.models.functions import Lower

from competition.vocabulary import FLAG_ROLES, BuzzMode, FlagProblem, MatchStatus, SeatKind


def text_choices(name: str, values: type[StrEnum]) -> type[models.TextChoices]:
    """A model's ``TextChoices`` of the vocabulary's ``values`` (same members and values; labels
    as Django derives them from the names), so a column's choices are defined once."""
    return models.TextChoices(name, [(m.name, m.value) for m in values])


def new_join_code() -> str:
    """Six characters, no look-alikes (0/O, 1/I), easy to type on a tablet."""
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    return "".join(secrets.choice(alphabet) for _ in range(6))


def new_token() -> str:
    """32 URL-safe characters, never starting with ``-`` (a command line would read it as an option)."""
    while (token := secrets.token_urlsafe(24)).startswith("-"):
        pass
    return token


class QuestionSet(models.Model):
    """A tournament set, e.g. ``2021-PACE`` (qbreader's ``set`` field)."""

    name = models.CharField(max_length=200, unique=True)
    year = models.IntegerField(null=True, blank=True)
    source = models.CharField(max_length=50, help_text="qbreader | qanta | demo | expo")

    def __str__(self) -> str:
        return self.name


class Packet(models.Model):
    question_set = models.ForeignKey(QuestionSet, on_delete=models.CASCADE, related_name="packets")
    name = models.CharField(max_length=200)

    class Meta:
        unique_together = [("question_set", "name")]

    def __str__(self) -> str:
        return f"{self.question_set.name} / {self.name}"


class Tossup(models.Model):
    """One tossup. ``question`` keeps the power marks ``(*)``/``(+)`` inline;
    ``answer_line`` keeps its HTML (``<b><u>`` = required) and bracketed directives."""

    packet = models.ForeignKey(Packet, on_delete=models.CASCADE, related_name="tossups")
    number = models.IntegerField()
    question = models.TextField()
    answer_line = models.TextField()
    category = models.CharField(max_length=100, blank=True)
    subcategory = models.CharField(max_length=100, blank=True)
    writer = models.CharField(max_length=200, blank=True)
    external_id = models.CharField(max_length=200, blank=True, db_index=True)

    class Meta:
        unique_together = [("packet", "number")]
        ordering = ["packet_id", "number"]

    def __str__(self) -> str:
        return f"{self.packet} #{self.number}"

    def clean(self) -> None:
        """The admin's check: every media marker parses and names a stored ``MediaFile``
        (``formats.media``; a file is added by importing its packet, not here)."""
        from django.core.exceptions import ValidationError

        from formats.media import MarkerError, has_markers, split_text

        if not has_markers(self.question):
            return
        try:
            markers = [m for m in split_text(self.question) if not isinstance(m, str)]
        except MarkerError as exc:
            raise ValidationError({"question": str(exc)}) from exc
        for m in markers:
            if m.kind != "delay" and (
                m.sha256 is None or not MediaFile.objects.filter(sha256=m.sha256).exists()
            ):
                raise ValidationError(
                    {"question": f"{m.kind} {m.ref!r} is not a stored media file: import its packet"}
                )


def media_path(sha256: str) -> str:
    """The storage name of a media file: ``media/<first two hex>/<sha256>`` (content-addressed)."""
    return f"media/{sha256[:2]}/{sha256}"


class MediaFile(models.Model):
    """An image or audio file of a multimodal tossup (``formats.media``), stored once under
    ``MEDIA_ROOT`` by its content hash and served at ``competition.game.MEDIA_URL + sha256``.
    Players may fetch it only once a match revealed a token naming it (``revealed``); logged-in
    organisers always (the moderator's preview)."""

    sha256 = models.CharField(max_length=64, primary_key=True, help_text="hex sha256 of the content")
    mime = models.CharField(max_length=100, help_text="image/* or audio/*")
    size = models.PositiveIntegerField(help_text="bytes")
    file = models.FileField(max_length=200)
    revealed = models.BooleanField(default=False, help_text="a match revealed it: anyone may fetch it")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.mime} {self.sha256[:12]}…"


class Bonus(models.Model):
    """A bonus: ``parts`` is a list of ``{"text", "answer_line", "value"}``."""

    packet = models.ForeignKey(Packet, on_delete=models.CASCADE, related_name="bonuses")
    number = models.IntegerField()
    leadin = models.TextField(blank=True)
    parts = models.JSONField()
    category = models.CharField(max_length=100, blank=True)
    subcategory = models.CharField(max_length=100, blank=True)
    writer = models.CharField(max_length=200, blank=True)
    external_id = models.CharField(max_length=200, blank=True)

    class Meta:
        verbose_name_plural = "bonuses"
        unique_together = [("packet", "number")]
        ordering = ["packet_id", "number"]


class Match(models.Model):
    """A live game, stored in three parts (``game.MatchState`` rebuilt from them):

    ``spec``: the immutable inputs (``game.MatchSpec``: config incl. the preset, teams, seats,
    tossup and bonus specs), written at creation and when a seat joins in the lobby, each time
    with a new ``spec_key`` (processes cache the parsed spec by match id and key);
    ``state``: the small live state (``MatchState.live_dict``: status, phase, clock, indexes,
    scores, current tossup/bonus run), written by every command that changes it;
    ``records``: the ruling record (``MatchState.records_dict``: history, adjustments,
    protests), written only when a ruling, adjustment or protest changes it (``records_key``).
    ``seq`` is the sequence number of the last event appended for this match. ``preset``,
    ``config``, ``tossup_ids`` and ``bonus_ids`` are the creation request, written once."""

    Status = text_choices("Status", MatchStatus)

    name = models.CharField(max_length=200)
    join_code = models.CharField(max_length=12, unique=True, default=new_join_code)
    moderator_token = models.CharField(max_length=64, default=new_token)
    preset = models.CharField(max_length=50)
    config = models.JSONField(default=dict, help_text="engine config incl. the preset snapshot")
    tossup_ids = models.JSONField(default=list)
    bonus_ids = models.JSONField(default=list)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.LOBBY)
    spec = models.JSONField(default=dict, help_text="game.MatchSpec: config, teams, seats, questions")
    spec_key = models.CharField(max_length=32, blank=True, help_text="new on every write of spec")
    state = models.JSONField(default=dict, help_text="the live state (MatchState.live_dict)")
    records = models.JSONField(default=dict, help_text="history, adjustments, protests")
    records_key = models.CharField(max_length=32, blank=True, help_text="new on every write of records")
    seq = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    driven_at = models.FloatField(
        null=True, blank=True, help_text="last moment (epoch s) a reading driver confirmed it drove the match"
    )

    class Meta:
        verbose_name_plural = "matches"

    def __str__(self) -> str:
        return f"{self.name} ({self.join_code})"


def hash_secret(secret: str) -> str:
    """sha256 hex of an identity secret: the secrets are random (``new_token``), so a fast hash
    is enough and keeps a join fast; only the hash is stored."""
    return hashlib.sha256(secret.encode()).hexdigest()


class Competitor(models.Model):
    """A person, team or bot across matches: the subject IRT fits, leaderboards and exports key
    on (``irt.pipeline.identity_key``), never a seat's display name.

    ``handle`` is unique regardless of case and may be renamed (pages show the current one).
    ``secret_hash`` (:func:`hash_secret`) is the owner's claim: a human's tablet keeps the secret
    and sends it with the handle when joining another match ("" for teams and bots, which the
    organiser seats). Organisers merge and split identities in the admin
    (``competition.identities``)."""

    class Kind(models.TextChoices):
        HUMAN = "human"
        TEAM = "team"
        BOT = "bot"

    handle = models.CharField(max_length=100)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    secret_hash = models.CharField(max_length=64, blank=True, help_text="sha256 of the owner's secret")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["handle"]
        constraints = [models.UniqueConstraint(Lower("handle"), name="competitor_handle_unique_ci")]

    def __str__(self) -> str:
        return f"{self.handle} ({self.kind})"

    @classmethod
    def create_fresh(cls, base: str, kind: str, secret: str = "") -> Competitor:
        """A new identity whose handle is ``base`` if free, else ``base 2``, ``base 3``…: a new
        seat never joins an existing identity by its name (concurrent creators retry)."""
        base = base.strip()[:90] or kind
        # One read of the handles taken, not one per number tried (thousands of matches with
        # teams called "A" made each new team probe "A", "A 2", … "A 1000" in turn).
        taken = {
            h.lower() for h in cls.objects.filter(handle__istartswith=base).values_list("handle", flat=True)
        }
        n = 1
        while True:
            handle = base if n == 1 else f"{base} {n}"
            n += 1
            if handle.lower() in taken:
                continue
            try:
                with transaction.atomic():
                    return cls.objects.create(
                        handle=handle, kind=kind, secret_hash=hash_secret(secret) if secret else ""
                    )
            except IntegrityError:  # taken meanwhile by a concurrent creator
                continue

    @classmethod
    def for_bot(cls, name: str, match_id: int | None = None) -> Competitor:
        """The bot identity whose handle is ``name`` (a bot seated again under its name is the
        same bot), created when there is none or it already plays in match ``match_id``; a
        human's or team's handle is never shared."""
        bots = cls.objects.filter(handle__iexact=name.strip(), kind=cls.Kind.BOT)
        if match_id is not None:
            bots = bots.exclude(teams__match_id=match_id).exclude(players__match_id=match_id)
        return bots.first() or cls.create_fresh(name, cls.Kind.BOT)


class Team(models.Model):
    Kind = text_choices("Kind", SeatKind)

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="teams")
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.HUMAN)
    competitor = models.ForeignKey(
        Competitor,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="teams",
        help_text="the identity across matches (a bot's team: the bot's)",
    )

    class Meta:
        unique_together = [("match", "name")]
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs) -> None:
        # A new team without an identity gets a fresh one (a bot's team: the bot's).
        if self._state.adding and self.competitor_id is None:
            self.competitor = (
                Competitor.for_bot(self.name, self.match_id)
                if self.kind == self.Kind.BOT
                else Competitor.create_fresh(self.name, Competitor.Kind.TEAM)
            )
        super().save(*args, **kwargs)


class Player(models.Model):
    """A seat in a match: a human on a tablet or a bot over the same protocol.
    ``token`` identifies the seat on reconnect (humans) or authenticates the bot."""

    Kind = text_choices("Kind", SeatKind)

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="players")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="players")
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.HUMAN)
    token = models.CharField(max_length=64, unique=True, default=new_token)
    weight_class = models.CharField(max_length=10, blank=True, help_text="bots: light | mid | heavy")
    buzz_mode = models.CharField(
        max_length=20,
        default=BuzzMode.AUTONOMOUS,
        choices=[(m.value, m.value) for m in BuzzMode],
        help_text="bots: autonomous | semi_autonomous (a teammate confirms) | muted (logged only)",
    )
    min_token = models.PositiveIntegerField(
        default=0, help_text="bots: may not buzz before this 0-based token"
    )
    reclaim_code = models.CharField(
        max_length=16,
        blank=True,
        help_text="one-time code the moderator issued to move this seat to a new tablet",
    )
    competitor = models.ForeignKey(
        Competitor,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="players",
        help_text="the person or bot across matches",
    )
    first_connected_at = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="when the seat's token first opened a socket (a seat that never connected is left out of fits)",
    )

    class Meta:
        unique_together = [("match", "name")]
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"

    def save(self, *args, **kwargs) -> None:
        # A seat created without an identity gets a fresh one; a bot, its bot identity (its
        # team's, which is the bot's own).
        if self._state.adding and self.competitor_id is None:
            if self.kind == self.Kind.HUMAN:
                self.competitor = Competitor.create_fresh(self.name, Competitor.Kind.HUMAN)
            elif self.team.kind == Team.Kind.BOT and self.team.competitor_id is not None:
                self.competitor = self.team.competitor
            else:
                self.competitor = Competitor.for_bot(self.name, self.match_id)
        super().save(*args, **kwargs)


class BotLaunch(models.Model):
    """A bot the server runs on a bot seat (``competition.botlaunch``): the moderator's wish
    (``guesser``, a key of ``botlaunch.known_guessers``, and ``wanted``) and what the bot supervisor
    (``manage.py bot_supervisor``) last reported of its process. ``generation`` grows with each
    launch, so the supervisor replaces a process started for an earlier one."""

    class State(models.TextChoices):
        STARTING = "starting"
        RUNNING = "running"
        RESTARTING = "restarting"
        STOPPED = "stopped"
        FAILED = "failed"

    player = models.OneToOneField(Player, on_delete=models.CASCADE, related_name="launch")
    guesser = models.CharField(max_length=120)
    weight_class = models.CharField(max_length=10, blank=True, help_text="the guesser's declared class")
    cost = models.FloatField(default=0.0, help_text="the guesser's declared cost, USD per prefix")
    wanted = models.BooleanField(default=True, help_text="False: the moderator stopped it")
    generation = models.PositiveIntegerField(default=1)
    state = models.CharField(max_length=12, choices=State.choices, default=State.STARTING)
    pid = models.IntegerField(null=True, blank=True)
    restarts = models.PositiveIntegerField(default=0)
    detail = models.CharField(max_length=300, blank=True, help_text="the last exit or start failure")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.guesser} on {self.player}"


class MatchEvent(models.Model):
    """The append-only event log. ``audience`` is ``all``, ``moderator``,
    ``player:<id>`` or ``team:<id>``; a client's replay is filtered by it."""

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="events")
    seq = models.BigIntegerField()
    event = models.CharField(max_length=50, help_text='the event\'s name (docs/PROTOCOL.md "Events")')
    payload = models.JSONField(default=dict)
    audience = models.CharField(max_length=30, default="all")
    actor = models.CharField(
        max_length=50, blank=True, help_text="who caused it: moderator, player:<id>, driver"
    )
    command_id = models.CharField(
        max_length=64, blank=True, default="", help_text="the client's id of the command (idempotency)"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        unique_together = [("match", "seq")]
        ordering = ["match_id", "seq"]
        indexes = [models.Index(fields=["match", "command_id"], name="event_command_id")]


class Outbox(models.Model):
    """Work to hand to Celery, stored in the same transaction as what caused it (e.g. a
    match's end), so a broker outage at commit time loses nothing: a sweeper sends every
    row not yet dispatched."""

    topic = models.CharField(max_length=50, help_text="e.g. fit_after_match")
    match = models.ForeignKey(Match, on_delete=models.CASCADE, null=True, blank=True)
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
    dispatched_at = models.DateTimeField(null=True, blank=True)
    done_at = models.DateTimeField(null=True, blank=True)
    attempts = models.IntegerField(default=0)

    class Meta:
        verbose_name_plural = "outbox"
        ordering = ["id"]


class Buzz(models.Model):
    """One buzz, written in the same transaction that accepts it (before the ack).

    ``token_index`` is the 0-based index of the last token the buzzer had been shown;
    times are seconds since the epoch (server clock unless named ``client_``)."""

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="buzzes")
    tossup = models.ForeignKey(Tossup, on_delete=models.PROTECT, related_name="buzzes")
    player = models.ForeignKey(Player, on_delete=models.CASCADE, related_name="buzzes")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="buzzes")
    kind = models.CharField(max_length=10)
    token_index = models.IntegerField()
    token_count = models.IntegerField()
    guess = models.TextField(blank=True)
    verdict = models.CharField(max_length=20, blank=True)
    verdict_reason = models.CharField(max_length=200, blank=True)
    ruling = models.CharField(max_length=20, blank=True)
    points = models.IntegerField(default=0)
    revealed_at = models.FloatField(null=True)
    received_at = models.FloatField()
    accepted_at = models.FloatField(null=True)
    ruled_at = models.FloatField(null=True)
    client_time = models.FloatField(null=True, help_text="the buzzer's own clock at the press (logged only)")
    corrected_press_at = models.FloatField(null=True)
    eligible = models.JSONField(default=list, help_text="player ids still eligible at the buzz")
    race = models.JSONField(default=dict, help_text="arbitration record: candidates and winner")
    seq = models.BigIntegerField(help_text="seq of the event that accepted the buzz")
    added_by_review = models.BooleanField(
        default=False, help_text="a missed buzz added to the scoresheet after the tossup (buzz_added)"
    )

    class Meta:
        verbose_name_plural = "buzzes"
        ordering = ["match_id", "seq"]


class BonusPartResult(models.Model):
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="bonus_results")
    bonus = models.ForeignKey(Bonus, on_delete=models.PROTECT)
    team = models.ForeignKey(Team, on_delete=models.CASCADE)
    part = models.IntegerField()
    guess = models.TextField(blank=True)
    verdict = models.CharField(max_length=20, blank=True)
    ruling = models.CharField(max_length=20, blank=True)
    points = models.IntegerField(default=0)
    seq = models.BigIntegerField()


class Flag(models.Model):
    """An expert flag on an ill-posed question (ADVSCORE.md §6)."""

    tossup = models.ForeignKey(Tossup, on_delete=models.CASCADE, related_name="flags")
    match = models.ForeignKey(Match, on_delete=models.SET_NULL, null=True, blank=True)
    reporter = models.CharField(max_length=100)
    role = models.CharField(max_length=20, choices=[(r.value, r.value) for r in FLAG_ROLES])
    problem = models.CharField(max_length=30, choices=[(p.value, p.label) for p in FlagProblem])
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)


class Tournament(models.Model):
    """A tournament: teams (:class:`TournamentTeam`, with their seats), packets and a format
    (``competition.schedule.Format`` as a dict); its games (:class:`TournamentGame`) are planned
    by ``competition.schedule.plan`` and played as matches (``competition.tournaments``).
    ``packet_ids`` are played in order, one packet per round (reused from the first when the
    rounds outnumber them); ``preset`` and ``config`` are every game's match settings."""

    name = models.CharField(max_length=200)
    preset = models.CharField(max_length=50, default="naqt")
    format = models.JSONField(
        default=dict, help_text="schedule.Format: round_robin, groups, qualifier, playoff"
    )
    config = models.JSONField(default=dict, help_text="game.MatchConfig overrides for every game")
    packet_ids = models.JSONField(default=list)
    tossups_per_game = models.IntegerField(
        null=True, blank=True, help_text="play only the first n tossups of each packet (None: all)"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # review: who accepts or sends back its games' results (competition.review); None: superusers only
    director = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    def __str__(self) -> str:
        return self.name


class TournamentTeam(models.Model):
    """A team of a tournament; ``seed`` 1-based (1 is the best); ``name`` is its identity's handle."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="teams")
    name = models.CharField(max_length=100)
    seed = models.IntegerField()
    competitor = models.ForeignKey(Competitor, on_delete=models.PROTECT, related_name="tournament_teams")

    class Meta:
        unique_together = [("tournament", "name"), ("tournament", "seed")]
        ordering = ["tournament_id", "seed"]

    def __str__(self) -> str:
        return self.name


class TournamentSeat(models.Model):
    """A player on a tournament team's roster (a human or an AI player), seated in each of the
    team's games; ``name`` is its identity's handle."""

    team = models.ForeignKey(TournamentTeam, on_delete=models.CASCADE, related_name="seats")
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=10, choices=Player.Kind.choices, default=Player.Kind.HUMAN)
    weight_class = models.CharField(max_length=10, blank=True, help_text="bots: light | mid | heavy")
    competitor = models.ForeignKey(Competitor, on_delete=models.PROTECT, related_name="tournament_seats")

    class Meta:
        ordering = ["team_id", "id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


class TournamentGame(models.Model):
    """One scheduled game: ``phase`` (prelim | qualifier | playoff), global ``round`` (1-based),
    ``slot`` (its place in the round), ``group`` (0-based), the ``room`` it is played in, its
    ``packet`` and the :class:`Match` that plays it."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="games")
    phase = models.CharField(max_length=10)
    round = models.IntegerField()
    slot = models.IntegerField()
    group = models.IntegerField(default=0)
    room = models.CharField(max_length=50)
    packet = models.ForeignKey(Packet, on_delete=models.PROTECT)
    home = models.ForeignKey(TournamentTeam, on_delete=models.PROTECT, related_name="home_games")
    away = models.ForeignKey(TournamentTeam, on_delete=models.PROTECT, related_name="away_games")
    match = models.OneToOneField(Match, on_delete=models.PROTECT, related_name="tournament_game")

    class Meta:
        unique_together = [("tournament", "phase", "round", "slot")]
        ordering = ["tournament_id", "round", "slot"]

    def __str__(self) -> str:
        return f"{self.tournament} {self.phase} round {self.round}: {self.home} vs {self.away}"


# --- stats (issue 33 item 9): the spectators' feed of a tournament ---------------------------------
Tournament.add_to_class(
    "public_feed",
    models.JSONField(
        default=dict,
        blank=True,
        help_text='what spectators see: {"player_names", "live_scores", "individual_stats"} booleans, '
        "each private (false) unless set (competition.spectators)",
    ),
)


# --- review: result review, rooms and devices (competition.review) ----------------------------


def new_room_code() -> str:
    """A room's pairing code: as a join code (six characters, no look-alikes)."""
    return new_join_code()


class TournamentRoom(models.Model):
    """Where a tournament's games are played (``TournamentGame.room`` is its ``name``). ``code``
    pairs a moderator's device to the room (typed, or in the QR code of the control page);
    ``help_at``: when its moderator asked the director for help (None: no help asked)."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="rooms")
    name = models.CharField(max_length=50)
    code = models.CharField(max_length=12, unique=True, default=new_room_code)
    help_at = models.DateTimeField(null=True, blank=True)
    help_note = models.CharField(max_length=200, blank=True)

    class Meta:
        unique_together = [("tournament", "name")]
        ordering = ["tournament_id", "name"]

    def __str__(self) -> str:
        return f"{self.tournament} {self.name}"


class DeskEntry(models.Model):
    """One step at the control desk, never changed once written: a game's result submitted,
    accepted or sent back (``game``), a room's help asked or cleared (``room``). ``actor``: the
    user (None: a moderator by the match's token), ``actor_label`` what the page shows;
    ``reason``: why (a send-back's reason, a help note); ``warnings``: those acknowledged on
    submission. A game's review state is its newest review entry (``competition.review``)."""

    class Action(models.TextChoices):
        SUBMITTED = "submitted", "submitted the result"
        ACCEPTED = "accepted", "accepted the result"
        SENT_BACK = "sent_back", "sent the result back"
        HELP_RAISED = "help_raised", "called for help"
        HELP_CLEARED = "help_cleared", "cleared the help call"

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="desk_entries")
    game = models.ForeignKey(
        TournamentGame, on_delete=models.CASCADE, null=True, blank=True, related_name="desk_entries"
    )
    room = models.ForeignKey(
        TournamentRoom, on_delete=models.CASCADE, null=True, blank=True, related_name="desk_entries"
    )
    action = models.CharField(max_length=20, choices=Action.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    actor_label = models.CharField(max_length=150)
    reason = models.TextField(blank=True)
    warnings = models.JSONField(default=list, blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["tournament_id", "id"]
        verbose_name_plural = "desk entries"

    def __str__(self) -> str:
        return f"{self.action} by {self.actor_label} at {self.at:%H:%M:%S}"


# --- workshop (issue 32): writers' drafts and their saved versions ---------------------------------


class Draft(models.Model):
    """A tossup a writer is writing in the workshop (``/workshop/``): its ``answer_line`` (judge
    grammar), ``category`` and ``text``, autosaved as the writer types; only its ``writer`` opens it."""

    writer = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="drafts")
    title = models.CharField(max_length=200, blank=True)
    answer_line = models.TextField(blank=True)
    category = models.CharField(max_length=50, blank=True)
    text = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return self.title or f"draft {self.pk}"


class DraftVersion(models.Model):
    """A version the writer saved: the draft's fields then, and ``predictions``, each bot's predicted
    buzz at that text (``buzzer.bots.workshop.predict``: ``{bot: {"buzz_index", "answer", "correct"}}``)."""

    draft = models.ForeignKey(Draft, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    answer_line = models.TextField()
    category = models.CharField(max_length=50, blank=True)
    text = models.TextField()
    predictions = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        unique_together = [("draft", "number")]
        ordering = ["draft_id", "number"]

    def __str__(self) -> str:
        return f"{self.draft} v{self.number}"


# --- editor (issue 32): submissions to the editors, their versions, and the packets made of them ---


class Submission(models.Model):
    """A writer's draft submitted to the editors (``competition.editorial``): ``status`` submitted →
    accepted, or returned with ``comment`` (the writer resubmits: a new version, submitted again).
    ``tossup``: the tossup made of it when an editor put it in a packet (then it plays as imported
    ones do). ``history``: ``[{"at", "by", "action", "comment"}]``, every step, oldest first."""

    class Status(models.TextChoices):
        SUBMITTED = "submitted"
        ACCEPTED = "accepted"
        RETURNED = "returned"

    draft = models.OneToOneField(Draft, on_delete=models.CASCADE, related_name="submission")
    writer = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="submissions")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.SUBMITTED)
    comment = models.TextField(blank=True, help_text="the editor's last comment to the writer")
    history = models.JSONField(default=list)
    tossup = models.OneToOneField(
        Tossup, null=True, blank=True, on_delete=models.SET_NULL, related_name="submission"
    )
    submitted_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return f"submission {self.pk} ({self.status})"


class SubmissionVersion(models.Model):
    """One version of a submission: what the writer submitted, or an editor's edit, with
    ``predictions``, each workshop bot's predicted buzz on that text computed by the server
    (``buzzer.bots.workshop.predict``: ``{bot: {"buzz_index", "answer", "correct"}}``)."""

    class Kind(models.TextChoices):
        SUBMITTED = "submitted"
        EDITED = "edited"

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    kind = models.CharField(max_length=10, choices=Kind.choices)
    author = models.ForeignKey("auth.User", null=True, on_delete=models.SET_NULL, related_name="+")
    answer_line = models.TextField()
    category = models.CharField(max_length=50, blank=True)
    text = models.TextField()
    predictions = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        unique_together = [("submission", "number")]
        ordering = ["submission_id", "number"]

    def __str__(self) -> str:
        return f"{self.submission} v{self.number}"
