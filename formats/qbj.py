"""QBJ tournament files (quizbowl/schema, ``../shared/reference/qbj-schema/serialization.mdx``).

A file is ``{"version", "objects": [...]}`` with exactly one ``Tournament`` among the objects; any
object may stand in for another as a reference ``{"$ref": id}``. ``read_qbj`` reads schema 1.x/2.x
files (typed objects; matches in ``Tournament.phases[].rounds[].matches``; answer counts as
``{"number", "answer_type": {"value"}}``) and the older 0.5 layout (untyped objects; the tournament
lists ``matches``; ``tossups``/``overtimeTossups``/``round``/``forfeit``; answer counts as
``{"number", "value"}``; match players named inline ``{"name"}`` instead of referenced) into plain
records; ``to_document`` writes records back as one schema-conformant file.

In the records, a match names its teams by team name (unique in a tournament) and players by name
(unique on their team): references are resolved on reading and rebuilt on writing, so a file read
and written again differs only in its ids and the fields Tossup does not keep (dates, sites,
rankings, questions' text, signatures, replacement questions, lightning rounds).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from formats.errors import FormatError
from formats.textio import read_text

#: The schema version ``to_document`` writes.
QBJ_VERSION = "2.1"  # quizbowl/schema package.json, with the serialization.mdx in ../shared/reference
#: QBJ's MIME type (serialization.mdx).
MIME_TYPE = "application/vnd.quizbowl.qbj+json"
#: 0.5 files put the first playoff round on the tournament; these are the phase names we give.
PRELIMS, PLAYOFFS, ALL_MATCHES = "Preliminary Rounds", "Playoffs", "All Matches"
LINEUP_REASONS = ("initial", "own_timeout", "other_timeout", "halftime", "segment_break", "before_overtime")


@dataclass(frozen=True)
class Player:
    """A registered player; ``year`` the school year (QBJ's coding: 12 = high-school senior)."""

    name: str
    year: int | None = None


@dataclass(frozen=True)
class Team:
    name: str
    players: tuple[Player, ...] = ()


@dataclass(frozen=True)
class Registration:
    """A school or other organisation with its teams."""

    name: str
    teams: tuple[Team, ...] = ()
    location: str | None = None


@dataclass(frozen=True)
class AnswerCount:
    """``number`` tossups answered for ``value`` points (15 power, 10 correct, −5 neg, …)."""

    value: int
    number: int


@dataclass(frozen=True)
class MatchPlayer:
    """A player's line in a match: ``player`` is the name on the team's roster."""

    player: str
    tossups_heard: int
    answer_counts: tuple[AnswerCount, ...] = ()


@dataclass(frozen=True)
class Lineup:
    """Who played from question ``first_question`` (1-based) on; ``reason`` one of ``LINEUP_REASONS``."""

    first_question: int
    players: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class MatchTeam:
    """One side of a match. QBJ allows ``points`` (total, for results without player detail) or
    ``bonus_points`` (total = tossup points + bonus points), never both."""

    team: str
    points: int | None = None
    bonus_points: int | None = None
    bonus_bounceback_points: int | None = None
    forfeit_loss: bool = False
    match_players: tuple[MatchPlayer, ...] = ()
    lineups: tuple[Lineup, ...] = ()


@dataclass(frozen=True)
class Buzz:
    """A buzz that scored ``value`` points; ``word_index`` the 0-based word it came on (if known)."""

    team: str
    player: str
    value: int
    word_index: int | None = None


@dataclass(frozen=True)
class MatchQuestion:
    """A tossup–bonus cycle (``number`` 1-based). The bonus is either the per-part points of the
    controlling team (``bonus_parts``; ``bonus_bounceback_parts`` when bounced back) or only its total
    ``bonus_points`` (QBJ forbids both)."""

    number: int
    buzzes: tuple[Buzz, ...] = ()
    bonus_points: int | None = None
    bonus_bounceback_points: int | None = None
    bonus_parts: tuple[int, ...] | None = None
    bonus_bounceback_parts: tuple[int | None, ...] | None = None


@dataclass(frozen=True)
class Match:
    """A match: ``key`` is the file's id for it; ``phase`` and ``round`` name where it was played."""

    key: str
    match_teams: tuple[MatchTeam, ...]
    match_questions: tuple[MatchQuestion, ...] = ()
    phase: str = ALL_MATCHES
    round: str = "Round 1"
    tossups_read: int | None = None
    overtime_tossups_read: int | None = None
    location: str | None = None
    serial: str | None = None
    tiebreaker: bool | None = None
    moderator: str | None = None
    notes: str | None = None


@dataclass(frozen=True)
class Tournament:
    name: str
    registrations: tuple[Registration, ...] = ()
    matches: tuple[Match, ...] = ()
    version: str = QBJ_VERSION
    question_set: str | None = None


# ---------------------------------------------------------------- reading


def read_qbj(path: str | Path) -> Tournament:
    """The tournament of a QBJ file (``.gz`` too). Raises FormatError ``"path: message"`` naming the
    JSON location (``objects[3].match_teams[0].team``) of the first defect: not JSON, not exactly one
    Tournament, an unresolved ``$ref``, a missing or mistyped required field, a duplicate team name,
    a match naming a team it does not have."""
    text = read_text(path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(path, exc.lineno, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    return _Reader(Path(path)).tournament(doc)


def read_document(doc: Any, source: str | Path) -> Tournament:
    """The tournament of an already parsed QBJ document (e.g. a YellowFruit ``.yft``, which is
    one); ``source`` names it in errors. Raises FormatError as :func:`read_qbj`."""
    return _Reader(Path(source)).tournament(doc)


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.ids: dict[str, Any] = {}
        self.team_names: dict[int, str] = {}  # id(team object) -> name
        self.rosters: dict[str, list[Player]] = {}  # team name -> players, roster order
        self.registrations: list[tuple[str, str | None, list[str]]] = []  # name, location, team names

    def fail(self, where: str, message: str) -> FormatError:
        return FormatError(self.path, None, f"{where}: {message}")

    # --- helpers over raw JSON

    def index(self, value: Any, where: str) -> None:
        """Record every object with an ``id`` (for ``$ref``) anywhere under ``value``."""
        if isinstance(value, dict):
            key = value.get("id")
            if isinstance(key, str | int) and "$ref" not in value:
                self.ids.setdefault(str(key), value)
            for k, v in value.items():
                self.index(v, f"{where}.{k}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                self.index(v, f"{where}[{i}]")

    def obj(self, value: Any, where: str) -> dict[str, Any]:
        """``value`` as an object, following a ``$ref``."""
        if isinstance(value, dict) and "$ref" in value:
            target = self.ids.get(str(value["$ref"]))
            if target is None:
                raise self.fail(where, f"unresolved reference {value['$ref']!r}")
            return target
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, got {type(value).__name__}")
        return value

    def items(self, parent: dict[str, Any], key: str, where: str, required: bool = False) -> list[Any]:
        value = parent.get(key)
        if value is None:
            if required:
                raise self.fail(where, f"missing '{key}'")
            return []
        if not isinstance(value, list):
            raise self.fail(f"{where}.{key}", f"expected a list, got {type(value).__name__}")
        return value

    def text(self, parent: dict[str, Any], key: str, where: str, required: bool = True) -> str | None:
        value = parent.get(key)
        if not required and (value is None or value == ""):
            return None
        if not required and isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)  # e.g. a room number
        if not isinstance(value, str) or (required and not value.strip()):
            raise self.fail(
                f"{where}.{key}" if key in parent else where, f"'{key}' must be a non-empty string"
            )
        return value.strip()

    def integer(self, parent: dict[str, Any], key: str, where: str, required: bool = False) -> int | None:
        value = parent.get(key)
        if value is None:
            if required:
                raise self.fail(where, f"missing '{key}'")
            return None
        if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
            return int(value)  # 0.5 files (HSNCT 2014) write some counts as strings
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(f"{where}.{key}", f"'{key}' must be an integer, got {value!r}")
        return value

    # --- the document

    def tournament(self, doc: Any) -> Tournament:
        if not isinstance(doc, dict) or not isinstance(doc.get("objects"), list):
            raise self.fail("top level", "expected an object with an 'objects' list")
        objects = doc["objects"]
        self.index(objects, "objects")
        found = [
            (i, o)
            for i, o in enumerate(objects)
            if isinstance(o, dict) and str(o.get("type", "")).lower() == "tournament"
        ]
        if len(found) != 1:
            raise self.fail("objects", f"expected exactly one Tournament object, found {len(found)}")
        at, raw = found[0]
        where = f"objects[{at}]"
        name = self.text(raw, "name", where)
        assert name is not None
        for i, reg in enumerate(self.items(raw, "registrations", where)):
            self.registration(self.obj(reg, f"{where}.registrations[{i}]"), f"{where}.registrations[{i}]")
        matches = self.matches(raw, where)
        registrations = tuple(
            Registration(reg, tuple(Team(t, tuple(self.rosters[t])) for t in teams), location)
            for reg, location, teams in self.registrations
        )
        version = doc.get("version")
        return Tournament(
            name,
            registrations,
            tuple(matches),
            str(version) if version is not None else QBJ_VERSION,
            self.text(raw, "question_set", where, required=False),
        )

    def registration(self, raw: dict[str, Any], where: str) -> None:
        name = self.text(raw, "name", where)
        assert name is not None
        teams = [
            self.team(self.obj(t, f"{where}.teams[{i}]"), f"{where}.teams[{i}]")
            for i, t in enumerate(self.items(raw, "teams", where))
        ]
        self.registrations.append((name, self.text(raw, "location", where, required=False), teams))

    def team(self, raw: dict[str, Any], where: str) -> str:
        """Register a team object (once) and return its name."""
        known = self.team_names.get(id(raw))
        if known is not None:
            return known
        name = self.text(raw, "name", where)
        assert name is not None
        if name in self.rosters:
            raise self.fail(where, f"a second team named {name!r}: team names must be unique")
        self.team_names[id(raw)] = name
        roster: list[Player] = []
        self.rosters[name] = roster
        for i, p in enumerate(self.items(raw, "players", where)):
            pw = f"{where}.players[{i}]"
            player = self.obj(p, pw)
            pname = self.text(player, "name", pw)
            assert pname is not None
            if any(x.name == pname for x in roster):
                raise self.fail(pw, f"a second player named {pname!r} on team {name!r}")
            roster.append(Player(pname, self.integer(player, "year", pw)))
        return name

    def matches(self, raw: dict[str, Any], where: str) -> list[Match]:
        out: list[Match] = []
        seen: set[int] = set()
        first_playoff = self.integer(raw, "firstPlayoffRound", where)
        for i, ref in enumerate(self.items(raw, "matches", where)):  # 0.5
            mw = f"{where}.matches[{i}]"
            m = self.obj(ref, mw)
            number = self.integer(m, "round", mw)
            phase = (
                ALL_MATCHES
                if first_playoff is None or number is None
                else (PLAYOFFS if number >= first_playoff else PRELIMS)
            )
            rnd = f"Round {number}" if number is not None else "Round 1"
            if id(m) not in seen:
                seen.add(id(m))
                out.append(self.match(m, mw, phase, rnd))
        for i, ph in enumerate(self.items(raw, "phases", where)):
            pw = f"{where}.phases[{i}]"
            phase_obj = self.obj(ph, pw)
            phase = str(self.text(phase_obj, "name", pw))
            for j, rd in enumerate(self.items(phase_obj, "rounds", pw)):
                rw = f"{pw}.rounds[{j}]"
                round_obj = self.obj(rd, rw)
                rnd = str(self.text(round_obj, "name", rw))
                for k, ref in enumerate(self.items(round_obj, "matches", rw)):
                    m = self.obj(ref, f"{rw}.matches[{k}]")
                    if id(m) not in seen:
                        seen.add(id(m))
                        out.append(self.match(m, f"{rw}.matches[{k}]", phase, rnd))
        return out

    def player_name(self, team: str, ref: Any, where: str) -> str:
        """The roster name of a referenced (or, in 0.5, inline-named) player; a player the roster
        lacks is added to it (0.5 files name substitutes who were never registered)."""
        player = self.obj(ref, where)
        name = self.text(player, "name", where)
        assert name is not None
        roster = self.rosters[team]
        if not any(p.name == name for p in roster):
            roster.append(Player(name, self.integer(player, "year", where)))
        return name

    def match(self, raw: dict[str, Any], where: str, phase: str, rnd: str) -> Match:
        key = raw.get("id")
        if not isinstance(key, str | int):
            raise self.fail(where, "a match needs an 'id'")
        forfeit = raw.get("forfeit") is True  # 0.5: per match
        teams: list[MatchTeam] = []
        for i, mt in enumerate(self.items(raw, "match_teams", where, required=True)):
            teams.append(
                self.match_team(self.obj(mt, f"{where}.match_teams[{i}]"), f"{where}.match_teams[{i}]")
            )
        if forfeit and teams:
            low = min(t.points or 0 for t in teams)
            teams = [replace(t, forfeit_loss=(t.points or 0) == low) for t in teams]
        names = {t.team for t in teams}
        questions = [
            self.question(
                self.obj(q, f"{where}.match_questions[{i}]"), f"{where}.match_questions[{i}]", names
            )
            for i, q in enumerate(self.items(raw, "match_questions", where))
        ]
        read = self.integer(raw, "tossups_read", where)
        if read is None:
            read = self.integer(raw, "tossups", where)
        overtime = self.integer(raw, "overtime_tossups_read", where)
        if overtime is None:
            overtime = self.integer(raw, "overtimeTossups", where)
        if forfeit:  # QBJ: absent, not 0, in forfeits
            read = overtime = None
        opt = {k: self.text(raw, k, where, required=False) for k in ("location", "moderator", "notes")}
        serial = raw.get("serial")
        tiebreaker = raw.get("tiebreaker")
        return Match(
            str(key),
            tuple(teams),
            tuple(questions),
            phase,
            rnd,
            read,
            overtime,
            opt["location"],
            str(serial) if serial is not None else None,
            tiebreaker if isinstance(tiebreaker, bool) else None,
            opt["moderator"],
            opt["notes"],
        )

    def match_team(self, raw: dict[str, Any], where: str) -> MatchTeam:
        if raw.get("team") is None:
            raise self.fail(where, "a match team without 'team' (cards are not supported)")
        team_obj = self.obj(raw["team"], f"{where}.team")
        team = self.team_names.get(id(team_obj))
        if team is None:  # a team defined in the match only: its own registration
            team = self.team(team_obj, f"{where}.team")
            self.registrations.append((team, None, [team]))
        players = []
        for i, mp in enumerate(self.items(raw, "match_players", where)):
            pw = f"{where}.match_players[{i}]"
            line = self.obj(mp, pw)
            if "player" not in line:
                raise self.fail(pw, "missing 'player'")
            name = self.player_name(team, line["player"], f"{pw}.player")
            counts = []
            for j, c in enumerate(self.items(line, "answer_counts", pw, required=True)):
                cw = f"{pw}.answer_counts[{j}]"
                count = self.obj(c, cw)
                answer = count.get("answer_type", count.get("answer"))  # "answer": Tossup's old export
                value = self.integer(
                    self.obj(answer, f"{cw}.answer_type") if answer is not None else count, "value", cw, True
                )
                number = self.integer(count, "number", cw, True)
                assert value is not None and number is not None
                counts.append(AnswerCount(value, number))
            heard = self.integer(line, "tossups_heard", pw, True)
            assert heard is not None
            players.append(MatchPlayer(name, heard, tuple(counts)))
        lineups = []
        for i, lu in enumerate(self.items(raw, "lineups", where)):
            lw = f"{where}.lineups[{i}]"
            lineup = self.obj(lu, lw)
            first = self.integer(lineup, "first_question", lw, True)
            reason = lineup.get("reason")
            if reason not in LINEUP_REASONS:
                raise self.fail(lw, f"'reason' must be one of {', '.join(LINEUP_REASONS)}, got {reason!r}")
            who = tuple(
                self.player_name(team, p, f"{lw}.players[{j}]")
                for j, p in enumerate(self.items(lineup, "players", lw, True))
            )
            assert first is not None
            lineups.append(Lineup(first, who, reason))
        return MatchTeam(
            team,
            self.integer(raw, "points", where),
            self.integer(raw, "bonus_points", where),
            self.integer(raw, "bonus_bounceback_points", where),
            raw.get("forfeit_loss") is True,
            tuple(players),
            tuple(lineups),
        )

    def question(self, raw: dict[str, Any], where: str, teams: set[str]) -> MatchQuestion:
        number = self.integer(raw, "question_number", where, True)
        assert number is not None
        buzzes = []
        for i, b in enumerate(self.items(raw, "buzzes", where)):
            bw = f"{where}.buzzes[{i}]"
            buzz = self.obj(b, bw)
            team_obj = self.obj(buzz.get("team"), f"{bw}.team")
            team = self.team_names.get(id(team_obj)) or self.text(team_obj, "name", f"{bw}.team")
            if team not in teams:
                raise self.fail(f"{bw}.team", f"team {team!r} does not play this match")
            assert team is not None
            player = self.player_name(team, buzz.get("player"), f"{bw}.player")
            value = self.integer(self.obj(buzz.get("result"), f"{bw}.result"), "value", f"{bw}.result", True)
            position = buzz.get("buzz_position")
            word = (
                self.integer(self.obj(position, f"{bw}.buzz_position"), "word_index", f"{bw}.buzz_position")
                if position is not None
                else None
            )
            assert value is not None
            buzzes.append(Buzz(team, player, value, word))
        parts: tuple[int, ...] | None = None
        bounce: tuple[int | None, ...] | None = None
        if raw.get("bonus") is not None:
            bonus = self.obj(raw["bonus"], f"{where}.bonus")
            raw_parts = [
                self.obj(p, f"{where}.bonus.parts[{i}]")
                for i, p in enumerate(self.items(bonus, "parts", f"{where}.bonus", True))
            ]
            controlled = [
                self.integer(p, "controlled_points", f"{where}.bonus.parts[{i}]", True)
                for i, p in enumerate(raw_parts)
            ]
            parts = tuple(int(c or 0) for c in controlled)
            bounced = tuple(
                self.integer(p, "bounceback_points", f"{where}.bonus.parts[{i}]")
                for i, p in enumerate(raw_parts)
            )
            bounce = bounced if any(b is not None for b in bounced) else None
        return MatchQuestion(
            number,
            tuple(buzzes),
            self.integer(raw, "bonus_points", where),
            self.integer(raw, "bonus_bounceback_points", where),
            parts,
            bounce,
        )


# ---------------------------------------------------------------- writing


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "x"


@dataclass
class _Ids:
    """Deterministic ids: equal records give equal ids, so re-exports compare equal."""

    used: set[str] = field(default_factory=set)

    def new(self, prefix: str, text: str) -> str:
        """``prefix_<slug of text>``, or ``text`` itself when ``prefix`` is empty; suffixed when taken."""
        base = f"{prefix}_{_slug(text)}" if prefix else text
        key, n = base, 2
        while key in self.used:
            key, n = f"{base}_{n}", n + 1
        self.used.add(key)
        return key


def _ref(key: str) -> dict[str, str]:
    return {"$ref": key}


def to_document(t: Tournament) -> dict[str, Any]:
    """The QBJ file of ``t``: ``{"version": QBJ_VERSION, "objects": [Registration…, Match…,
    Tournament]}``; teams, players and matches referenced by id (``team_…``, ``player_…``,
    ``match_…`` from their names and keys). The tournament carries one ScoringRules whose answer
    types are every value answered, and whose team and player maxima cover the file. Raises
    ValueError when a match names a team or player the registrations lack."""
    ids = _Ids()
    team_ids: dict[str, str] = {}
    player_ids: dict[tuple[str, str], str] = {}
    objects: list[dict[str, Any]] = []
    for reg in t.registrations:
        teams = []
        for team in reg.teams:
            team_ids[team.name] = tid = ids.new("team", team.name)
            players = []
            for p in team.players:
                player_ids[(team.name, p.name)] = pid = ids.new("player", f"{team.name} {p.name}")
                players.append({"type": "Player", "id": pid, "name": p.name, **_given(year=p.year)})
            teams.append({"type": "Team", "id": tid, "name": team.name, "players": players})
        objects.append(
            {
                "type": "Registration",
                "id": ids.new("school", reg.name),
                "name": reg.name,
                **_given(location=reg.location),
                "teams": teams,
            }
        )

    def team_ref(name: str) -> dict[str, str]:
        if name not in team_ids:
            raise ValueError(f"team {name!r} plays a match but is in no registration")
        return _ref(team_ids[name])

    def player_ref(team: str, name: str) -> dict[str, str]:
        if (team, name) not in player_ids:
            raise ValueError(f"player {name!r} plays for {team!r} but is not on its roster")
        return _ref(player_ids[(team, name)])

    rounds: dict[str, dict[str, list[dict[str, str]]]] = {}
    values: set[int] = set()
    most_players, most_teams = 4, 2
    for m in _grouped(t.matches):
        mid = ids.new("", m.key)  # the source's own id, so a re-export keeps it
        rounds.setdefault(m.phase, {}).setdefault(m.round, []).append(_ref(mid))
        most_teams = max(most_teams, len(m.match_teams))
        match_teams = []
        for mt in m.match_teams:
            lines = []
            for mp in mt.match_players:
                values.update(c.value for c in mp.answer_counts)
                lines.append(
                    {
                        "player": player_ref(mt.team, mp.player),
                        "tossups_heard": mp.tossups_heard,
                        "answer_counts": [
                            {"number": c.number, "answer_type": {"value": c.value}} for c in mp.answer_counts
                        ],
                    }
                )
            lineups = []
            for lu in mt.lineups:
                most_players = max(most_players, len(lu.players))
                lineups.append(
                    {
                        "first_question": lu.first_question,
                        "players": [player_ref(mt.team, p) for p in lu.players],
                        "reason": lu.reason,
                    }
                )
            match_teams.append(
                {
                    "team": team_ref(mt.team),
                    **_given(
                        forfeit_loss=mt.forfeit_loss or None, points=mt.points, bonus_points=mt.bonus_points
                    ),
                    **_given(bonus_bounceback_points=mt.bonus_bounceback_points),
                    "match_players": lines,
                    **({"lineups": lineups} if lineups else {}),
                }
            )
        questions = []
        for q in m.match_questions:
            buzzes = []
            for b in q.buzzes:
                values.add(b.value)
                buzz: dict[str, Any] = {"team": team_ref(b.team), "player": player_ref(b.team, b.player)}
                if b.word_index is not None:
                    buzz["buzz_position"] = {"word_index": b.word_index}
                buzz["result"] = {"value": b.value}
                buzzes.append(buzz)
            question: dict[str, Any] = {"question_number": q.number, "buzzes": buzzes}
            if q.bonus_parts is not None:
                bounce = q.bonus_bounceback_parts or ()
                question["bonus"] = {
                    "parts": [
                        {
                            "controlled_points": p,
                            **_given(bounceback_points=bounce[i] if i < len(bounce) else None),
                        }
                        for i, p in enumerate(q.bonus_parts)
                    ]
                }
            else:
                question.update(
                    _given(bonus_points=q.bonus_points, bonus_bounceback_points=q.bonus_bounceback_points)
                )
            questions.append(question)
        objects.append(
            {
                "type": "Match",
                "id": mid,
                **_given(tossups_read=m.tossups_read, overtime_tossups_read=m.overtime_tossups_read),
                **_given(
                    location=m.location, serial=m.serial, tiebreaker=m.tiebreaker, moderator=m.moderator
                ),
                "match_teams": match_teams,
                **({"match_questions": questions} if questions else {}),
                **_given(notes=m.notes),
            }
        )
    phases = [
        {
            "type": "Phase",
            "id": ids.new("phase", phase),
            "name": phase,
            "rounds": [
                {"type": "Round", "id": ids.new("round", f"{phase} {name}"), "name": name, "matches": refs}
                for name, refs in by_round.items()
            ],
        }
        for phase, by_round in rounds.items()
    ]
    rules = {
        "type": "ScoringRules",
        "id": "scoring_rules",
        "name": f"{t.name} rules",
        "teams_per_match": most_teams,
        "maximum_players_per_team": most_players,
        "answer_types": [
            {"type": "AnswerType", "id": f"answer_type_{v}".replace("-", "neg"), "value": v}
            for v in sorted(values, reverse=True)
        ],
    }
    objects.append(
        {
            "type": "Tournament",
            "id": ids.new("tournament", t.name),
            "name": t.name,
            "scoring_rules": rules,
            "registrations": [_ref(o["id"]) for o in objects if o["type"] == "Registration"],
            "phases": phases,
            **_given(question_set=t.question_set),
        }
    )
    return {"version": QBJ_VERSION, "objects": objects}


def _grouped(matches: tuple[Match, ...]) -> list[Match]:
    """The matches grouped by phase, then round (each in order of first appearance): the order in
    which the file lists them, so a file read back lists its matches in the same order."""
    order: dict[tuple[str, str], list[Match]] = {}
    phases: dict[str, None] = {}
    for m in matches:
        phases.setdefault(m.phase)
        order.setdefault((m.phase, m.round), []).append(m)
    return [m for phase in phases for (p, _), ms in order.items() if p == phase for m in ms]


def _given(**fields: Any) -> dict[str, Any]:
    """The fields that have a value (QBJ leaves unknown fields out rather than writing null)."""
    return {k: v for k, v in fields.items() if v is not None}


# ---------------------------------------------------------------- plain JSON of one match


def match_to_json(m: Match) -> dict[str, Any]:
    """``m`` as plain JSON (field names as in the records), e.g. to keep it in a database row;
    ``match_from_json`` is its inverse."""
    return asdict(m)


def match_from_json(d: dict[str, Any]) -> Match:
    """Inverse of ``match_to_json``. Raises KeyError/TypeError for another shape."""
    teams = tuple(
        MatchTeam(
            t["team"],
            t["points"],
            t["bonus_points"],
            t["bonus_bounceback_points"],
            t["forfeit_loss"],
            tuple(
                MatchPlayer(
                    p["player"], p["tossups_heard"], tuple(AnswerCount(**c) for c in p["answer_counts"])
                )
                for p in t["match_players"]
            ),
            tuple(Lineup(lu["first_question"], tuple(lu["players"]), lu["reason"]) for lu in t["lineups"]),
        )
        for t in d["match_teams"]
    )
    questions = tuple(
        MatchQuestion(
            q["number"],
            tuple(Buzz(**b) for b in q["buzzes"]),
            q["bonus_points"],
            q["bonus_bounceback_points"],
            None if q["bonus_parts"] is None else tuple(q["bonus_parts"]),
            None if q["bonus_bounceback_parts"] is None else tuple(q["bonus_bounceback_parts"]),
        )
        for q in d["match_questions"]
    )
    rest = {k: v for k, v in d.items() if k not in ("match_teams", "match_questions")}
    return Match(match_teams=teams, match_questions=questions, **rest)
