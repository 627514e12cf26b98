"""A tournament's public feed (competition.spectators): across all 8 combinations of its three
settings, no private field reaches a spectator — not in the watch socket's snapshot and event
frames (a real websocket, a real game), not in the tournament page, its standings API, the watch
page or the recap. Matches outside a tournament keep today's open feed."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from competition import game, review, selectors, spectators, tournaments
from competition.models import Match, Player
from competition.vocabulary import Role
from config.asgi import application
from tests.support.factories import ANSWERS, make_match, make_packet

pytestmark = pytest.mark.django_db(transaction=True)

HUMANS = ("Zelda Quill", "Yorick Plume", "Xavia Stone")  # names that appear nowhere else
SCORE_KEYS = {"scores", "score", "points", "points_before", "points_reversed"}
COMBOS = [
    dict(zip(spectators.FEED_SETTINGS, on, strict=True)) for on in itertools.product([False, True], repeat=3)
]


def _tournament(feed: dict[str, bool]):
    tossups, _ = make_packet(n_tossups=2, n_bonuses=2)
    t = tournaments.create_tournament(
        name="Junior Cup",
        teams=[
            {"name": "North", "players": [{"name": HUMANS[0]}, {"name": HUMANS[1]}]},
            {"name": "South", "players": [{"name": HUMANS[2]}, {"name": "lightbot", "kind": "bot", "weight_class": "light"}]},
        ],
        packet_ids=[tossups[0].packet_id],
        fmt={},
        config={"wpm": 900, "auto_rule": True},
    )  # fmt: skip
    t.public_feed = feed
    t.save(update_fields=["public_feed"])
    return t, t.games.get().match


def _values(node: Any, keys: set[str]) -> list[Any]:
    """Every value under one of ``keys`` anywhere in ``node``."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k in keys:
                out.append(v)
            out += _values(v, keys)
    elif isinstance(node, list):
        for v in node:
            out += _values(v, keys)
    return out


def _check_names(text: str, feed: dict[str, bool], where: str) -> None:
    for name in HUMANS:
        assert (name in text) is False or feed["player_names"], f"{name!r} leaked in {where}"


async def _recv(comm: WebsocketCommunicator) -> dict[str, Any]:
    while True:
        frame = json.loads(await comm.receive_from(timeout=10))
        if frame.get("type") != "heartbeat":
            return frame


async def _until(comm: WebsocketCommunicator, pred) -> tuple[dict, list[dict]]:
    seen: list[dict] = []
    async with asyncio.timeout(15):
        while True:
            frame = await _recv(comm)
            if pred(frame):
                return frame, seen
            seen.append(frame)


def _event(name: str):
    return lambda f: f.get("type") == "event" and f["event"] == name


async def _connect(match: Match, role: str, token: str = "") -> WebsocketCommunicator:
    comm = WebsocketCommunicator(
        application, f"/ws/match/{match.join_code}/{role}/" + (f"?token={token}" if token else "")
    )
    assert (await comm.connect())[0]
    return comm


def _make_official(t, match) -> None:
    """The moderator submits the ended game and the director (a superuser) accepts it."""
    game_row = t.games.get(match=match)
    review.submit(game_row, acknowledged=[w.key for w in review.warnings(game_row.match)])
    review.accept(game_row, user=get_user_model().objects.create_superuser("td", password="x"))


@pytest.mark.parametrize(
    "feed", COMBOS, ids=lambda f: "-".join(k for k, v in f.items() if v) or "all_private"
)
async def test_no_private_field_reaches_a_spectator(feed):
    t, match = await database_sync_to_async(_tournament)(feed)
    zelda = await database_sync_to_async(Player.objects.get)(match=match, name=HUMANS[0])
    moderator = await _connect(match, "moderate", match.moderator_token)
    player = await _connect(match, "play", zelda.token)
    watcher = await _connect(match, "watch")
    for comm in (moderator, player):
        assert (await _recv(comm))["type"] == "snapshot"
    snapshot = await _recv(watcher)
    assert snapshot["type"] == "snapshot"

    # a live game: Zelda buzzes and answers right (15 or 10 points), the tossup ends
    await moderator.send_to(text_data=json.dumps({"type": "command", "name": "start"}))
    started, _ = await _until(player, _event("tossup_started"))
    await _until(player, lambda f: _event("words")(f) and f["data"]["start"] + len(f["data"]["words"]) >= 3)
    qid = started["data"]["question_id"]
    await player.send_to(text_data=json.dumps({"type": "buzz", "question_id": qid, "token_index": 2}))
    await _until(player, _event("buzz"))
    await player.send_to(text_data=json.dumps({"type": "answer", "question_id": qid, "text": ANSWERS[0]}))
    ruled, _ = await _until(player, _event("buzz_ruled"))
    assert ruled["data"]["points"] > 0 and ruled["data"]["scores"]  # the seat itself sees its points
    ended, live = await _until(watcher, _event("tossup_ended"))
    live = [snapshot, *live, ended]
    live_text = json.dumps(live)

    # the live frames: names, scores
    assert any(_event("buzz")(f) for f in live) and any(_event("buzz_ruled")(f) for f in live)
    _check_names(live_text, feed, "the watch socket")
    scores = [v for v in _values(live, SCORE_KEYS) if v is not None]
    if feed["live_scores"]:
        assert scores, "live scores are public but no spectator frame had one"
    else:
        assert scores == [], f"live scores leaked: {scores}"
    buzz = next(f for f in live if _event("buzz")(f))
    expected = HUMANS[0] if feed["player_names"] else "Player 1"
    assert buzz["data"]["player"] == expected
    assert {p["name"] for p in snapshot["state"]["players"]} >= {"lightbot"}  # a bot keeps its name

    # the pages and the API while the game is live (anonymous: a spectator)
    client = Client()
    page = await database_sync_to_async(client.get)(f"/tournament/{t.id}/")
    html = page.content.decode()
    _check_names(html, feed, "the tournament page")
    live_score = f"{ruled['data']['scores'][str(zelda.team_id)]}–0"
    assert (live_score in html) is feed["live_scores"]
    watch = (await database_sync_to_async(client.get)(f"/watch/{match.join_code}/")).content.decode()
    _check_names(watch, feed, "the watch page")
    recap = await database_sync_to_async(client.get)(f"/match/{match.join_code}/recap/")
    assert recap.status_code == (200 if all(feed.values()) else 403)

    # the end: final scores are public, the game counts in the standings
    await moderator.send_to(text_data=json.dumps({"type": "command", "name": "end"}))
    final, more = await _until(watcher, _event("match_ended"))
    assert final["data"]["scores"][str(zelda.team_id)] > 0
    _check_names(json.dumps([*more, final]), feed, "the watch socket")
    for comm in (moderator, player, watcher):
        await comm.disconnect()

    await database_sync_to_async(_make_official)(t, match)  # standings count official results only
    ended_state = await database_sync_to_async(selectors.snapshot)(match.id, Role.SPECTATOR, None)
    _check_names(json.dumps(ended_state), feed, "the ended snapshot")
    assert all(t["score"] is not None for t in ended_state["state"]["teams"])
    body = (await database_sync_to_async(client.get)(f"/api/tournament/{t.id}/standings")).json()
    html = (await database_sync_to_async(client.get)(f"/tournament/{t.id}/")).content.decode()
    for where, text in (("the standings API", json.dumps(body)), ("the tournament page", html)):
        _check_names(text, feed, where)
    if feed["individual_stats"]:
        assert body["players"] and body["stats"]["players"] and 'id="individual-stats"' in html
        shown = {p["player"] for p in body["stats"]["players"]}
        assert (HUMANS[0] in shown) is feed["player_names"] and ("Player 1" in shown) is not feed[
            "player_names"
        ]
    else:
        assert body["players"] == [] and body["stats"]["players"] == []
        assert 'id="individual-stats"' not in html and 'id="player-stats"' not in html
    assert [r["team"] for r in body["stats"]["teams"]] == ["North", "South"]  # team figures are public


def test_the_allow_list_drops_fields_it_does_not_name():
    """A field added to the engine's view or an event later is not sent until listed."""
    feed = spectators.FeedPolicy(
        player_names=False, live_scores=False, individual_stats=False, names={7: "Player 1"}
    )
    view = {
        "status": "running",
        "secret_internal": "x",
        "teams": [{"team_id": 1, "name": "North", "kind": "human", "score": 25, "new_field": 1}],
        "players": [{"player_id": 7, "team_id": 1, "name": "Zelda Quill", "kind": "human", "token": "t"}],
        "history": [{"player_id": 7, "points": 15, "guess": "moby dick", "judge_notes": "…"}],
    }
    out = spectators.snapshot_view(view, feed)
    assert out == {
        "status": "running",
        "teams": [{"team_id": 1, "name": "North", "kind": "human", "score": None}],
        "players": [{"player_id": 7, "team_id": 1, "name": "Player 1", "kind": "human"}],
        "history": [{"player_id": 7, "points": None, "guess": "moby dick"}],
    }
    data = {
        "player_id": 7,
        "player": "Zelda Quill",
        "team": "North",
        "question_id": 3,
        "reclaim_code": "s3cret",
    }
    assert spectators.event_data(game.EventName.BUZZ, data, feed, over=False) == {
        "player_id": 7,
        "player": "Player 1",
        "team": "North",
        "question_id": 3,
    }
    assert spectators.event_data("a_new_event", {"anything": 1}, feed, over=False) == {}
    # every event the engine names has its allow-list, but those never sent to the `all` audience
    # (a team's AI suggestions, the moderator's question flags, an imported match's record)
    never = {game.EventName.BONUS_SUGGESTION, game.EventName.QUESTION_FLAGGED, game.EventName.MATCH_IMPORTED}
    assert set(game.EventName) - set(spectators.EVENTS) == never
    # a team renamed keeps its name; a seat joining later than the socket shows by its id only
    assert spectators.event_data(game.EventName.RENAMED, {"team_id": 1, "player_id": None, "name": "Norte"}, feed, over=False)["name"] == "Norte"  # fmt: skip
    assert spectators.event_data(game.EventName.RENAMED, {"team_id": 1, "player_id": 9, "name": "New Kid"}, feed, over=False)["name"] == "Player #9"  # fmt: skip
    # the end carries its final scores; anything after the end too
    ended = spectators.event_data(game.EventName.MATCH_ENDED, {"scores": {"1": 25}}, feed, over=False)
    assert ended == {"scores": {"1": 25}}
    assert spectators.setting({"player_names": "yes", "live_scores": True}) == {
        "player_names": False,
        "live_scores": True,
        "individual_stats": False,
    }


def test_a_match_outside_a_tournament_keeps_the_open_feed():
    match = make_match()
    assert spectators.match_policy(match.id) is spectators.OPEN
    state = selectors.snapshot(match.id, Role.SPECTATOR, None)["state"]
    assert {p["name"] for p in state["players"]} == set(match.players.values_list("name", flat=True))
    assert Client().get(f"/match/{match.join_code}/recap/").status_code == 200
