"""The services that make and change matches: creation and the lobby, seats and reclaim codes,
the commands of players, moderators and organisers, and expert flags.

Every change to a running match goes through the one door, ``competition.live.store.apply_command``
(lock the row, apply the engine, store the events, publish on commit); the reading driver's
words go ``competition.live.ticks``' way. Public functions are keyword-only and raise
``competition.errors.ServiceError`` (or the engine's ``RuleViolation``) without changing anything.
"""

from __future__ import annotations

import dataclasses
import secrets
from typing import Any

from django.db import transaction

from competition import game, selectors
from competition.errors import ServiceError
from competition.game import EventName
from competition.live import store
from competition.models import (
    Bonus,
    Competitor,
    Flag,
    Match,
    MatchEvent,
    Player,
    Team,
    Tossup,
    TournamentGame,
    new_token,
)
from competition.vocabulary import (
    Audience,
    BonusDecision,
    BuzzMode,
    FlagProblem,
    QuestionKind,
    Role,
    SeatKind,
)
from competition.vocabulary import actor as actor_name
from scoring.judge import Judgement, Verdict, judge
from scoring.rules import WEIGHT_CLASSES, load_preset


def tossup_spec(tossup: Tossup) -> game.TossupSpec:
    return game.tokenize_tossup(
        tossup.id, tossup.question, tossup.answer_line, tossup.category, external_id=tossup.external_id
    )


def bonus_spec(bonus: Bonus) -> game.BonusSpec:
    parts = [game.BonusPartSpec(p["text"], p["answer_line"], p.get("value", 10)) for p in bonus.parts]
    return game.BonusSpec(bonus.id, bonus.leadin, parts)


def create_match(
    *,
    name: str,
    tossup_ids: list[int],
    bonus_ids: list[int] | None = None,
    preset: str = "naqt",
    teams: list[str],
    bots: list[dict[str, str]] | None = None,
    config: dict[str, Any] | None = None,
    identities: dict[str, Competitor] | None = None,
    seats: list[dict[str, Any]] | None = None,
) -> Match:
    """Create a match in the lobby with human ``teams`` (names) and ``bots``
    (``[{"name", "weight_class", "team"?, "bot_team"?, "buzz_mode"?, "min_token"?}]``): a bot without
    ``team`` plays on a team of bots named ``bot_team`` (default: its own name; bots naming the
    same ``bot_team`` share it); with ``team`` (one of ``teams``) it takes a seat on that human
    team (a hybrid team, HYBRID.md) with its ``buzz_mode`` (autonomous | semi_autonomous |
    muted; default autonomous) and ``min_token`` (default 0). ``config`` overrides
    :class:`competition.game.MatchConfig` fields (``wpm``, ``answer_window``, ``auto_rule``…).
    ``identities`` (team name → team Competitor) and ``seats`` (``[{"team", "name", "kind",
    "weight_class", "competitor"}]``: humans and AI players seated on the human teams from the
    start, e.g. a tournament's rosters) make the same team and people the same identities
    across matches.

    Raises ServiceError for unknown presets, no tossups, duplicate team or seat names, a seat on
    no team of the match, a bot's unknown team or invalid buzz settings, a tossup whose media
    marker is malformed or names a file never imported."""
    try:
        preset_obj = load_preset(preset)
    except ValueError as exc:
        raise ServiceError("unknown_preset", str(exc)) from exc
    if not tossup_ids:
        raise ServiceError("invalid", "a match needs at least one tossup")
    names = [t.strip() for t in teams if t.strip()]
    bots = bots or []
    for bot in bots:
        if bot.get("team") is not None and bot["team"] not in names:
            raise ServiceError("invalid", f"bot {bot['name']!r}: no human team named {bot['team']!r}")
        problem = game.check_seat(
            SeatKind.BOT, bot.get("buzz_mode", BuzzMode.AUTONOMOUS), bot.get("min_token", 0)
        )
        if problem:
            raise ServiceError("invalid", f"bot {bot['name']!r}: {problem}")
    bot_teams = list(dict.fromkeys(b.get("bot_team") or b["name"] for b in bots if b.get("team") is None))
    all_team_names = names + bot_teams
    if len(set(all_team_names)) != len(all_team_names):
        raise ServiceError("invalid", "team and bot names must be unique")
    seat_names = [s["name"] for s in seats or []] + [b["name"] for b in bots]
    if len(set(seat_names)) != len(seat_names):
        raise ServiceError("invalid", "seat names must be unique in a match")
    tossups = {t.id: t for t in Tossup.objects.filter(id__in=tossup_ids)}
    missing = [i for i in tossup_ids if i not in tossups]
    if missing:
        raise ServiceError("invalid", f"unknown tossup ids: {missing[:5]}")
    for tossup in tossups.values():
        try:
            tossup_spec(tossup)
        except ValueError as exc:  # a media marker edited by hand (formats.media)
            raise ServiceError("invalid", f"tossup {tossup.id}: {exc}") from exc
    known_bonuses = set(Bonus.objects.filter(id__in=bonus_ids or []).values_list("id", flat=True))
    bonus_ids = [b for b in bonus_ids or [] if b in known_bonuses]
    cfg = game.MatchConfig(preset=preset_obj, **(config or {}))
    with transaction.atomic():
        match = Match.objects.create(
            name=name, preset=preset, config=cfg.to_dict(), tossup_ids=tossup_ids, bonus_ids=bonus_ids
        )
        human_teams = {
            team_name: Team.objects.create(
                match=match,
                name=team_name,
                kind=Team.Kind.HUMAN,
                competitor=(identities or {}).get(team_name),
            )
            for team_name in names
        }
        for seat in seats or []:
            if seat["team"] not in human_teams:
                raise ServiceError("invalid", f"seat {seat['name']!r}: no team named {seat['team']!r}")
            Player.objects.create(
                match=match,
                team=human_teams[seat["team"]],
                name=seat["name"],
                kind=seat.get("kind", Player.Kind.HUMAN),
                weight_class=seat.get("weight_class", ""),
                competitor=seat.get("competitor"),
            )
        teams_of_bots = {
            team_name: Team.objects.create(match=match, name=team_name, kind=Team.Kind.BOT)
            for team_name in bot_teams
        }
        for bot in bots:
            team = human_teams.get(bot.get("team") or "") or teams_of_bots[bot.get("bot_team") or bot["name"]]
            Player.objects.create(
                match=match,
                team=team,
                name=bot["name"],
                kind=Player.Kind.BOT,
                weight_class=bot.get("weight_class", ""),
                buzz_mode=bot.get("buzz_mode", BuzzMode.AUTONOMOUS),
                min_token=bot.get("min_token", 0),
            )
        _build_lobby_state(match)
    return match


def _build_lobby_state(match: Match) -> None:
    """The initial state, built once from the rows when the match is created; later seats
    are added by ``game.SeatPlayer`` through ``store.apply_command`` (see :func:`join_match`)."""
    cfg = game.MatchConfig.from_dict(match.config)
    teams = [game.TeamSpec(t.id, t.name, t.kind) for t in match.teams.all()]
    players = [
        game.PlayerSpec(p.id, p.team_id, p.name, p.kind, p.weight_class, p.buzz_mode, p.min_token)
        for p in match.players.all()
    ]
    tossups = {t.id: t for t in Tossup.objects.filter(id__in=match.tossup_ids)}
    bonuses = {b.id: b for b in Bonus.objects.filter(id__in=match.bonus_ids)}
    state = game.new_match(
        cfg,
        teams,
        players,
        [tossup_spec(tossups[i]) for i in match.tossup_ids],
        [bonus_spec(bonuses[i]) for i in match.bonus_ids if i in bonuses],
    )
    match.save(update_fields=store.write_parts(match, None, state))


def join_match(
    *, code: str, name: str, team: str, secret: str = "", competitor: Competitor | None = None
) -> Player:
    """Seat a human player, or give a seat back to its owner.

    A new name joins only in the lobby, on a human team named ``team``. An existing name gets
    its seat back (whatever ``team`` says) only with ``secret``: the seat's own token (kept
    on the tablet) or the one-time reclaim code the moderator issued
    (:func:`issue_reclaim_code`). A reclaim code is cleared once used and the seat's token
    is replaced, so the tablet the seat moved away from can no longer reconnect.

    A new seat plays as ``competitor`` (default: a fresh identity named after the seat;
    ``competition.identities.join`` claims one by handle).

    Raises ServiceError: ``not_found`` (code), ``invalid`` (empty name, unknown team, a
    bot's name), ``seat_taken`` (an existing name without its secret), ``closed`` (match
    started and no seat of that name)."""
    name = name.strip()
    if not name or len(name) > 100:
        raise ServiceError("invalid", "name must be 1–100 characters")
    with transaction.atomic():
        try:
            match = Match.objects.select_for_update().get(join_code=code.strip().upper())
        except Match.DoesNotExist as exc:
            raise ServiceError("not_found", "no match with that join code") from exc
        existing = match.players.filter(name=name, kind=Player.Kind.HUMAN).first()
        if existing is not None:
            return _reclaim_seat(existing, secret)
        if match.status != Match.Status.LOBBY:
            raise ServiceError("closed", "the match has started; only existing players can rejoin")
        team_obj = match.teams.filter(name=team.strip(), kind=Team.Kind.HUMAN).first()
        if team_obj is None:
            raise ServiceError("invalid", f"no human team named {team!r}")
        if match.players.filter(name=name).exists():
            raise ServiceError("invalid", "that name is taken")
        player = Player.objects.create(
            match=match, team=team_obj, name=name, kind=Player.Kind.HUMAN, competitor=competitor
        )
        # The seat reaches the state through the one door: a ``player_joined`` event with its seq.
        seat = game.SeatPlayer(player.id, team_obj.id, player.name, player.kind, player.weight_class)
        store.apply_command(match_id=match.id, command=seat, actor=actor_name(Role.PLAYER, player.id))
    return player


RECLAIM_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud, typed on a tablet
RECLAIM_LENGTH = 8  # 32**8 ≈ 10**12 codes against a rate-limited /api/join


def normalize_reclaim_code(text: str) -> str:
    """A reclaim code as typed (any case, spaces or dashes) in its stored form."""
    return "".join(c for c in text.upper() if c.isalnum())


def _reclaim_seat(player: Player, secret: str) -> Player:
    """``player`` if ``secret`` is its token or its pending reclaim code (then used up and the
    token replaced); ServiceError ``seat_taken`` otherwise. Called under the match's lock."""
    if secret and secrets.compare_digest(secret.encode(), player.token.encode()):
        return player
    code = normalize_reclaim_code(secret)
    if player.reclaim_code and code and secrets.compare_digest(code.encode(), player.reclaim_code.encode()):
        player.reclaim_code = ""
        player.token = new_token()
        player.save(update_fields=["reclaim_code", "token"])
        return player
    raise ServiceError(
        "seat_taken",
        "that name is already seated: rejoin from its own tablet, or ask the moderator for a reclaim code",
    )


def issue_reclaim_code(*, match_id: int, player_id: int) -> str:
    """A new one-time code that moves human seat ``player_id`` of match ``match_id`` to another
    tablet (pass it as ``secret`` to :func:`join_match`); replaces any earlier code.

    Raises ServiceError ``not_found`` (no such human seat in that match)."""
    code = "".join(secrets.choice(RECLAIM_ALPHABET) for _ in range(RECLAIM_LENGTH))
    updated = Player.objects.filter(id=player_id, match_id=match_id, kind=Player.Kind.HUMAN).update(
        reclaim_code=code
    )
    if not updated:
        raise ServiceError("not_found", "no such player seat in this match")
    return code


def seat_bot(
    *,
    match_id: int,
    name: str,
    team_id: int | None,
    weight_class: str,
    buzz_mode: str = BuzzMode.AUTONOMOUS,
    min_token: int = 0,
    now: float | None = None,
) -> Player:
    """Seat a new bot on team ``team_id`` (a human team: a hybrid seat; or a bots' team) of a match
    in the lobby or running, or with ``team_id`` None on a new team of its own named after it, for
    the organiser. The seat reaches the state as a ``player_joined`` event with its seq
    (``game.SeatPlayer`` through ``store.apply_command``), after ``team_added`` (``game.AddTeam``)
    for a new team, so every dashboard and tablet sees them. ``weight_class``: light | mid | heavy
    (the race's tie-break).

    Raises ServiceError: ``not_found`` (match or team not in it), ``closed`` (the match ended),
    ``invalid`` (empty or taken seat name, or team name for a team of its own, or a team of its own
    in a tournament game, which has two teams; bad weight class, buzz mode or min token)."""
    name = name.strip()
    if not name or len(name) > 100:
        raise ServiceError("invalid", "name must be 1–100 characters")
    if weight_class not in WEIGHT_CLASSES:
        raise ServiceError("invalid", f"weight class must be one of {', '.join(WEIGHT_CLASSES)}")
    if problem := game.check_seat(SeatKind.BOT, buzz_mode, min_token):
        raise ServiceError("invalid", problem)
    with transaction.atomic():
        try:
            match = Match.objects.select_for_update().get(pk=match_id)
        except Match.DoesNotExist as exc:
            raise ServiceError("not_found", "no such match") from exc
        if match.status == Match.Status.ENDED:
            raise ServiceError("closed", "the match has ended")
        if match.players.filter(name=name).exists():
            raise ServiceError("invalid", "that name is taken")
        if team_id is None:
            if match.teams.filter(name=name).exists():
                raise ServiceError("invalid", "a team of that name plays already")
            if TournamentGame.objects.filter(match=match).exists():
                raise ServiceError("invalid", "a tournament game keeps its two teams: seat the bot on one")
            team = Team.objects.create(match=match, name=name, kind=Team.Kind.BOT)
            store.apply_command(
                match_id=match.id,
                command=game.AddTeam(team.id, name),
                actor=actor_name(Role.MODERATOR),
                now=now,
            )
        else:
            found = match.teams.filter(pk=team_id).first()
            if found is None:
                raise ServiceError("not_found", "no such team in this match")
            team = found
        player = Player.objects.create(
            match=match,
            team=team,
            name=name,
            kind=Player.Kind.BOT,
            weight_class=weight_class,
            buzz_mode=buzz_mode,
            min_token=min_token,
        )
        seat = game.SeatPlayer(player.id, team.id, name, player.kind, weight_class, buzz_mode, min_token)
        store.apply_command(match_id=match.id, command=seat, actor=actor_name(Role.MODERATOR), now=now)
    return player


# --- thin command helpers used by the edges -------------------------------------------------


def buzz(
    *,
    match_id: int,
    player_id: int,
    question_id: int,
    token_index: int,
    client_time: float | None,
    corrected_press_at: float | None,
    delay_bound: float = 0.0,
    cost: float | None = None,
    now: float | None = None,
) -> store.Applied:
    """A buzz press. ``token_index`` and ``corrected_press_at`` are the client's claims;
    ``cost`` a bot's declared USD cost of the guess (a race tie-break);
    ``delay_bound`` (seconds) the connection's measured one-way delay bound: the engine decides
    the token index and press time from them (``game.Buzz``) and logs claim and decision as
    ``buzz_received`` (moderator audience) in the same transaction, so an acknowledged buzz is
    never lost. Raises ``game.RuleViolation`` (nothing stored) when the rules refuse it."""
    cmd = game.Buzz(player_id, question_id, token_index, client_time, corrected_press_at, delay_bound, cost)
    return store.apply_command(
        match_id=match_id, command=cmd, actor=actor_name(Role.PLAYER, player_id), now=now
    )


def answer(
    *, match_id: int, player_id: int, question_id: int, text: str, now: float | None = None
) -> store.Applied:
    """The buzzer's answer (or reply to a prompt): judged against the answer line, then
    applied; the verdict is a suggestion unless the match auto-rules."""
    state = selectors.load_state(match_id)
    verdict = _judge_tossup(state, player_id, question_id, text)
    cmd = game.Answer(
        player_id, question_id, text[:500], verdict.verdict, verdict.reason, verdict.directed_prompt
    )
    return store.apply_command(
        match_id=match_id, command=cmd, actor=actor_name(Role.PLAYER, player_id), now=now
    )


def _judge_tossup(state: game.MatchState, player_id: int, question_id: int, text: str) -> Judgement:
    t = state.tossup
    answering = t.buzz and (t.buzz.answerer_id or t.buzz.player_id) if t is not None else None
    if t is None or t.question_id != question_id or answering != player_id:
        # Not this player's turn: the engine refuses the Answer with the precise reason.
        return Judgement(Verdict.REJECT, None, "no answer expected")
    spec = state.tossups[t.index]
    return judge(
        spec.answer_line,
        text,
        token_index=t.buzz.token_index,
        token_count=len(spec.tokens),
        question=game.words_text(spec.tokens),
    )


def bonus_answer(
    *, match_id: int, player_id: int, bonus_id: int, part: int, text: str, now: float | None = None
) -> store.Applied:
    """An answer to the current bonus part by a player (or bot) of the controlling team."""
    state = selectors.load_state(match_id)
    spec = next((b for b in state.bonuses if b.bonus_id == bonus_id), None)
    if spec is None or not 0 <= part < len(spec.parts):
        verdict = Judgement(Verdict.REJECT, None, "no such bonus part")
    else:
        verdict = judge(spec.parts[part].answer_line, text)
    cmd = game.BonusAnswer(
        player_id, bonus_id, part, text[:500], verdict.verdict, verdict.reason, verdict.directed_prompt
    )
    return store.apply_command(
        match_id=match_id, command=cmd, actor=actor_name(Role.PLAYER, player_id), now=now
    )


def confirm_buzz(
    *, match_id: int, bot_id: int, confirm: bool, player_id: int | None, now: float | None = None
) -> store.Applied:
    """A human teammate (``player_id``) or the moderator (None) confirms or declines the pending
    buzz of semi-autonomous bot seat ``bot_id`` (``game.ConfirmBuzz``; the engine checks that
    the confirmer is on the bot's team)."""
    cmd = game.ConfirmBuzz(bot_id, confirm, player_id)
    who = actor_name(Role.MODERATOR) if player_id is None else actor_name(Role.PLAYER, player_id)
    return store.apply_command(match_id=match_id, command=cmd, actor=who, now=now)


MAX_EXPLANATION = 1000  # characters of a bonus suggestion's explanation kept


def bonus_suggestion(
    *,
    match_id: int,
    player_id: int,
    bonus_id: int,
    part: int,
    guess: str,
    confidence: float,
    explanation: str = "",
    now: float | None = None,
) -> store.Applied:
    """A bot seat's suggested answer to the open bonus part for its team's captain
    (``game.BonusSuggestion``; shown only to that team and the moderator). Not judged here:
    it is judged when the captain consults it (:func:`decide_bonus`)."""
    cmd = game.BonusSuggestion(
        player_id, bonus_id, part, guess[:500], confidence, explanation[:MAX_EXPLANATION]
    )
    return store.apply_command(
        match_id=match_id, command=cmd, actor=actor_name(Role.PLAYER, player_id), now=now
    )


def decide_bonus(
    *,
    match_id: int,
    bonus_id: int,
    part: int,
    decision: str,
    player_id: int | None,
    bot_id: int | None = None,
    now: float | None = None,
    command_id: str = "",
) -> store.Applied:
    """The captain's (``player_id``; None: the moderator) own | consult | abstain on the open
    bonus part (``game.DecideBonus``). For consult, the chosen suggestion (``bot_id``'s, else the
    first) is judged against the part's answer line here, as any bonus answer is."""
    state = selectors.load_state(match_id)
    verdict = Judgement(Verdict.REJECT, None, "no suggestion")
    b = state.bonus
    if decision == BonusDecision.CONSULT and b is not None and b.bonus_id == bonus_id and b.part == part:
        chosen = next((x for x in b.suggestions if bot_id in (None, x.player_id)), None)
        spec = next(x for x in state.bonuses if x.bonus_id == bonus_id)
        if chosen is not None:
            verdict = judge(spec.parts[part].answer_line, chosen.guess)
    cmd = game.DecideBonus(
        bonus_id, part, decision, player_id, bot_id, verdict.verdict, verdict.reason, verdict.directed_prompt
    )
    who = actor_name(Role.MODERATOR) if player_id is None else actor_name(Role.PLAYER, player_id)
    return store.apply_command(match_id=match_id, command=cmd, actor=who, now=now, command_id=command_id)


def moderate(
    *,
    match_id: int,
    command: Any,
    now: float | None = None,
    command_id: str = "",
    seen_seq: int | None = None,
) -> store.Applied:
    """A moderator's engine command (pause, skip, a ruling…; ``buzzer.protocol.moderator_command``
    builds it from a dashboard's frame), idempotent by ``command_id`` and refused when made on a
    view older than what happened since ``seen_seq`` (``store.apply_command``). Raises
    ``game.RuleViolation`` (nothing stored) when the rules refuse it, ServiceError ``stale_view``
    when its view is out of date. A ``ReplaceQuestion`` without its spare gets the match's next
    one (:func:`next_spare`); a ``ReviewRuling`` or ``AddBuzz`` is the moderator's."""
    if isinstance(command, game.ReplaceQuestion):
        command = _with_spare(match_id, command)
    if isinstance(command, game.ReviewRuling | game.AddBuzz) and not command.by:
        command = dataclasses.replace(command, by=actor_name(Role.MODERATOR))
    return store.apply_command(
        match_id=match_id,
        command=command,
        actor=actor_name(Role.MODERATOR),
        now=now,
        command_id=command_id,
        seen_seq=seen_seq,
    )


def substitute(
    *,
    match_id: int,
    team_id: int,
    player_in: int | None = None,
    player_out: int | None = None,
    now: float | None = None,
    command_id: str = "",
) -> store.Applied:
    """The moderator changes team ``team_id``'s lineup (``game.Substitute``: ``player_in`` from its
    bench, ``player_out`` to it), in the lobby or at a break the preset allows. Raises
    RuleViolation ``unknown_team``, ``unknown_player`` (a seat not on that team's roster),
    ``no_substitution``, ``lineup_full`` or ``bad_value``; nothing is stored then."""
    cmd = game.Substitute(team_id, player_in, player_out)
    return moderate(match_id=match_id, command=cmd, now=now, command_id=command_id)


def call_timeout(
    *, match_id: int, team_id: int, now: float | None = None, command_id: str = ""
) -> store.Applied:
    """Team ``team_id`` calls a timeout (``game.CallTimeout``), the moderator records it, between
    questions only. Raises RuleViolation ``unknown_team``, ``bad_phase`` or ``no_timeouts_left``."""
    return moderate(match_id=match_id, command=game.CallTimeout(team_id), now=now, command_id=command_id)


def undo_timeout(*, match_id: int, now: float | None = None, command_id: str = "") -> store.Applied:
    """The moderator takes back the newest timeout of this break (``game.UndoTimeout``), until the
    next tossup starts: its team gets it back (``timeout_undone``). Raises RuleViolation
    ``bad_phase`` (not between questions) or ``no_timeout`` (none to undo); nothing is stored then."""
    return moderate(match_id=match_id, command=game.UndoTimeout(), now=now, command_id=command_id)


def rename(
    *, match_id: int, name: str, team_id: int | None = None, player_id: int | None = None
) -> store.Applied:
    """An organiser corrects the name of team ``team_id`` or seat ``player_id`` of a match (the
    admin's door): through the engine, so the spec, the ``Team``/``Player`` row, the event log
    (``renamed``) and every connected screen agree. Raises RuleViolation ``bad_value``,
    ``unknown_team`` or ``unknown_player``; Match.DoesNotExist for an unknown match."""
    return store.apply_command(
        match_id=match_id,
        command=game.Rename(name, team_id=team_id, player_id=player_id),
        actor=Role.ORGANISER,
    )


def flag_question(
    *, match_id: int, question_id: int, problem: str, comment: str, reporter: str, role: str
) -> store.Applied:
    """An expert flag (ADVSCORE.md §6) from a match (a player's or the moderator's) on its tossup
    ``question_id``, which must have ended; logged there as a ``question_flagged`` event for the
    moderator. ``problem``: a ``competition.vocabulary.FlagProblem``; ``role``: one of
    ``FLAG_ROLES``. Raises ServiceError ``invalid`` for an unknown problem type, or a tossup not
    in the match or still being played."""
    _check_problem(problem)
    ended = MatchEvent.objects.filter(
        match_id=match_id, event=EventName.TOSSUP_ENDED, payload__question_id=question_id
    ).exists()
    if not ended:
        raise ServiceError("invalid", "a question can be flagged only after its tossup ended")
    event = game.Event(
        EventName.QUESTION_FLAGGED,
        {"question_id": question_id, "problem": problem, "reporter": reporter},
        Audience.MODERATOR,
    )
    with transaction.atomic():
        Flag.objects.create(
            tossup_id=question_id,
            match_id=match_id,
            reporter=reporter,
            role=role,
            problem=problem,
            comment=comment[:2000],
        )
        return store.apply_command(match_id=match_id, command=None, actor=str(role), extra_events=[event])


def flag_question_as_editor(*, question_id: int, problem: str, comment: str, reporter: str) -> Flag:
    """An editor's flag on any tossup, outside a match (e.g. after reviewing the analysis).
    Raises ServiceError ``invalid`` for an unknown problem type or tossup."""
    _check_problem(problem)
    if not Tossup.objects.filter(pk=question_id).exists():
        raise ServiceError("invalid", f"no tossup with id {question_id}")
    return Flag.objects.create(
        tossup_id=question_id, reporter=reporter, role=Role.EDITOR, problem=problem, comment=comment[:2000]
    )


def _check_problem(problem: str) -> None:
    if problem not in tuple(FlagProblem):
        raise ServiceError("invalid", f"unknown problem type {problem!r}; one of {', '.join(FlagProblem)}")


# --- spares and the full-scoresheet review (spares) ----------------------------------------


MAX_ACTOR = 50  # MatchEvent.actor's column width


def next_spare(match_id: int, kind: str, state: game.MatchState) -> game.TossupSpec | game.BonusSpec | None:
    """The spare a thrown-out ``kind`` (tossup|bonus) of match ``match_id`` is replaced by: the
    next question, in packet order (packet, number), of the packets the match's questions come
    from that the match has not used (``state``'s tossups or bonuses, thrown-out ones included);
    None when none is left. A packet's questions beyond those the game plays are its spares."""
    match = Match.objects.get(pk=match_id)
    packets = Tossup.objects.filter(id__in=match.tossup_ids).values("packet_id")
    if kind == QuestionKind.BONUS:
        used = [b.bonus_id for b in state.bonuses]
        bonus = (
            Bonus.objects.filter(packet_id__in=packets)
            .exclude(id__in=used)
            .order_by("packet_id", "number")
            .first()
        )
        return bonus_spec(bonus) if bonus is not None else None
    used = [q.question_id for q in state.tossups]
    for tossup in (
        Tossup.objects.filter(packet_id__in=packets).exclude(id__in=used).order_by("packet_id", "number")
    ):
        try:
            return tossup_spec(tossup)
        except ValueError:  # a media marker edited by hand: not a readable spare
            continue
    return None


def _with_spare(match_id: int, command: game.ReplaceQuestion) -> game.ReplaceQuestion:
    """``command`` with the match's next spare (the engine refuses ``no_spares`` when none is left)."""
    if command.spare is not None:
        return command
    spare = next_spare(match_id, command.kind, selectors.load_state(match_id))
    return dataclasses.replace(command, spare=spare)


def replace_question(
    *,
    match_id: int,
    kind: str,
    reason: str,
    now: float | None = None,
    command_id: str = "",
    seen_seq: int | None = None,
) -> store.Applied:
    """The moderator throws out the current (or just finished) tossup or bonus (``kind``) for
    ``reason`` and the match's next spare (:func:`next_spare`) is read in its place
    (``game.ReplaceQuestion``). Raises RuleViolation ``no_spares`` (nothing changes) when the
    match has none left, or as the engine refuses (``spares.replace_question``)."""
    command = game.ReplaceQuestion(kind, reason)
    return moderate(match_id=match_id, command=command, now=now, command_id=command_id, seen_seq=seen_seq)


def review_ruling(
    *,
    match_id: int,
    history_index: int,
    reason: str,
    by: str,
    ruling: str = "",
    player_id: int | None = None,
    now: float | None = None,
    command_id: str = "",
    seen_seq: int | None = None,
) -> store.Applied:
    """Correct any earlier ruling of match ``match_id``'s scoresheet (``game.ReviewRuling``):
    ``ruling`` and/or, for a tossup buzz, the seat credited (``player_id``), for ``reason``.
    ``by``: who corrects, as the log names them (``moderator``, ``organiser:<username>`` for the
    control desk): the events' actor and the ``ruling_reviewed``'s ``by``. The buzz log,
    standings and, after the end, the fits follow (``store.store_events``). Raises
    RuleViolation as the engine refuses (``review.review_ruling``), nothing stored."""
    by = by[:MAX_ACTOR]
    command = game.ReviewRuling(history_index, reason, ruling, player_id, by)
    return store.apply_command(
        match_id=match_id, command=command, actor=by, now=now, command_id=command_id, seen_seq=seen_seq
    )


def add_buzz(
    *,
    match_id: int,
    tossup_index: int,
    player_id: int,
    ruling: str,
    reason: str,
    by: str,
    token_index: int | None = None,
    now: float | None = None,
    command_id: str = "",
    seen_seq: int | None = None,
) -> store.Applied:
    """Add to match ``match_id``'s scoresheet a buzz the moderator missed (``game.AddBuzz``):
    seat ``player_id`` on tossup ``tossup_index`` (0-based, already played) at word
    ``token_index`` (None: after the end), ruled ``ruling``, for ``reason``. ``by`` as for
    :func:`review_ruling`. The buzz log gets a row marked ``added_by_review``; standings and,
    after the end, the fits follow. Raises RuleViolation as the engine refuses
    (``review.add_buzz``), nothing stored."""
    by = by[:MAX_ACTOR]
    command = game.AddBuzz(tossup_index, player_id, ruling, reason, token_index, by)
    return store.apply_command(
        match_id=match_id, command=command, actor=by, now=now, command_id=command_id, seen_seq=seen_seq
    )
