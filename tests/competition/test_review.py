"""The control desk's services (``competition.review``): a result is official only once its
moderator submits it and the director accepts it; a send-back needs a reason and reopens it;
anyone but the director (or a superuser) is refused and changes nothing; the match record's
warnings block submission until acknowledged; the standings count official results only; rooms,
their pairing codes, states and help flags."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from competition import game, review, tournaments
from competition.live import store
from competition.models import DeskEntry, Match, TournamentGame, TournamentRoom
from tests.competition.test_tournaments import T0, _play, _tournament

pytestmark = pytest.mark.django_db
Action = DeskEntry.Action


@pytest.fixture
def people(db):
    users = get_user_model().objects
    return {
        "director": users.create_user("director", password="x"),
        "other": users.create_user("other", password="x"),
        "root": users.create_superuser("root", password="x"),
    }


def _directed(people, **kwargs):
    t = _tournament(4, **kwargs)
    t.director = people["director"]
    t.save(update_fields=["director"])
    return t


def _played(t, capture, **kwargs) -> TournamentGame:
    g = t.games.select_related("match", "home").first()
    _play(g.match, g.home.name, capture, **kwargs)
    return g


def _wins(t) -> dict[str, int]:
    return {s.team: s.wins for s in tournaments.standings(t).teams}


def test_a_result_counts_only_once_submitted_and_accepted_each_step_recorded(
    people, django_capture_on_commit_callbacks
):
    t = _directed(people)
    g = _played(t, django_capture_on_commit_callbacks)
    assert review.warnings(g.match) == []  # a clean game: tossup ruled, bonus fully ruled
    assert review.review_state(g) == review.ReviewState.OPEN and sum(_wins(t).values()) == 0
    review.submit(g)
    assert review.review_state(g) == review.ReviewState.SUBMITTED and sum(_wins(t).values()) == 0
    assert [r.key for _, r in tournaments.results(t)] == [tournaments.game_key(g)]  # played, not official
    review.accept(g, user=people["director"])
    assert review.review_state(g) == review.ReviewState.OFFICIAL
    assert _wins(t)[g.home.name] == 1 and sum(_wins(t).values()) == 1
    steps = list(t.desk_entries.values_list("action", "actor_label", "actor__username"))
    assert steps == [(Action.SUBMITTED, "moderator", None), (Action.ACCEPTED, "director", "director")]
    with pytest.raises(review.ReviewError) as again:  # an official result is not reviewed twice
        review.accept(g, user=people["director"])
    assert again.value.code == "bad_state" and t.desk_entries.count() == 2


def test_a_send_back_needs_a_reason_and_reopens_the_result_for_the_moderator(
    people, django_capture_on_commit_callbacks
):
    t = _directed(people)
    g = _played(t, django_capture_on_commit_callbacks)
    with pytest.raises(review.ReviewError) as early:  # nothing submitted yet
        review.send_back(g, user=people["director"], reason="check tossup 1")
    assert early.value.code == "bad_state"
    review.submit(g)
    with pytest.raises(review.ReviewError) as blank:
        review.send_back(g, user=people["director"], reason="   ")
    assert blank.value.code == "invalid" and review.review_state(g) == review.ReviewState.SUBMITTED
    review.send_back(g, user=people["director"], reason="tossup 1 was a power, not a ten")
    assert review.review_state(g) == review.ReviewState.SENT_BACK and sum(_wins(t).values()) == 0
    with pytest.raises(review.ReviewError) as sent:
        review.accept(g, user=people["director"])
    assert sent.value.code == "bad_state"
    review.submit(g)  # corrected and submitted again
    review.accept(g, user=people["director"])
    assert review.review_state(g) == review.ReviewState.OFFICIAL
    assert list(t.desk_entries.values_list("action", "reason")) == [
        (Action.SUBMITTED, ""),
        (Action.SENT_BACK, "tossup 1 was a power, not a ten"),
        (Action.SUBMITTED, ""),
        (Action.ACCEPTED, ""),
    ]


@pytest.mark.parametrize("who", ["other", "anonymous"])
def test_a_review_from_someone_not_the_director_is_refused_and_changes_nothing(
    people, who, django_capture_on_commit_callbacks
):
    from django.contrib.auth.models import AnonymousUser

    t = _directed(people)
    g = _played(t, django_capture_on_commit_callbacks)
    review.submit(g)
    user = people["other"] if who == "other" else AnonymousUser()
    for step in (lambda: review.accept(g, user=user), lambda: review.send_back(g, user=user, reason="no")):
        with pytest.raises(review.ReviewError) as refused:
            step()
        assert refused.value.code == "forbidden" and refused.value.status == 403
    assert review.review_state(g) == review.ReviewState.SUBMITTED and t.desk_entries.count() == 1
    review.accept(g, user=people["root"])  # a superuser may act for the director
    assert review.review_state(g) == review.ReviewState.OFFICIAL


def test_without_a_director_only_a_superuser_reviews(people, django_capture_on_commit_callbacks):
    t = _tournament(4)
    g = _played(t, django_capture_on_commit_callbacks)
    review.submit(g)
    assert not review.may_review(t, people["director"]) and review.may_review(t, people["root"])


def test_warnings_block_submission_until_each_is_acknowledged(people, django_capture_on_commit_callbacks):
    t = _directed(people)
    first, second = list(t.games.select_related("match", "home")[:2])
    # first: started, protested, ended while tossup 1 is read (no ruling), the protest open
    with django_capture_on_commit_callbacks(execute=True):
        store.apply_command(match_id=first.match.id, command=game.Start(), actor="moderator", now=T0)
        store.apply_command(
            match_id=first.match.id,
            command=game.Protest("the reader skipped a clue"),
            actor="moderator",
            now=T0 + 1,
        )
        store.apply_command(match_id=first.match.id, command=game.End(), actor="moderator", now=T0 + 2)
    first.match.refresh_from_db()
    keys = [w.key for w in review.warnings(first.match)]
    assert keys == ["tossup-1-no-ruling", "protest-1-open"]
    for acknowledged in ([], ["tossup-1-no-ruling"], ["protest-1-open", "bogus"]):
        with pytest.raises(review.ReviewError) as refused:
            review.submit(first, acknowledged=acknowledged)
        assert refused.value.code == "unacknowledged"
        assert [w["key"] for w in refused.value.extra["warnings"]] == [
            k for k in keys if k not in acknowledged
        ]
    assert review.review_state(first) == review.ReviewState.OPEN and not t.desk_entries.exists()
    entry = review.submit(first, acknowledged=keys)
    assert [w["key"] for w in entry.warnings] == keys  # what was acknowledged stays on record
    # second: a correct tossup whose bonus was never answered
    _play(second.match, second.home.name, django_capture_on_commit_callbacks, bonus=False)
    assert [w.key for w in review.warnings(second.match)] == ["bonus-1-missing"]


def test_a_game_not_ended_cannot_be_submitted(people):
    t = _directed(people)
    g = t.games.first()
    with pytest.raises(review.ReviewError) as refused:
        review.submit(g)
    assert refused.value.code == "not_ended" and not t.desk_entries.exists()


def test_rooms_have_codes_states_and_a_help_flag_recorded(people, django_capture_on_commit_callbacks):
    t = _directed(people)
    rooms = {r.name: r for r in review.ensure_rooms(t)}
    assert set(rooms) == {"Room 1", "Room 2"} and len({r.code for r in rooms.values()}) == 2
    room = rooms["Room 1"]
    assert review.room_by_code(f" {room.code.lower()} ") == room
    with pytest.raises(review.ReviewError) as unknown:
        review.room_by_code("NOPE99")
    assert unknown.value.code == "not_found"

    def state() -> review.RoomState:
        games = review.room_games(room)
        return review.room_state(room, games, review.review_states(games))

    first = review.current_game(room)
    assert first is not None and first.round == 1 and state() == review.RoomState.WAITING
    store.apply_command(match_id=first.match.id, command=game.Start(), actor="moderator", now=T0)
    first.match.refresh_from_db()
    assert state() == review.RoomState.READING
    review.set_help(room, raised=True, note="buzzer 3 is dead")
    assert state() == review.RoomState.NEEDS_HELP
    with pytest.raises(review.ReviewError):
        review.set_help(room, raised=True)
    review.set_help(room, raised=False, user=people["director"])
    assert state() == review.RoomState.READING and TournamentRoom.objects.get(pk=room.pk).help_at is None
    with django_capture_on_commit_callbacks(execute=True):
        store.apply_command(match_id=first.match.id, command=game.End(), actor="moderator", now=T0 + 5)
    # ended: the room's current game is its next one; the room awaits the ended one's review
    now = review.current_game(room)
    assert now is not None and now.round == 2 and state() == review.RoomState.AWAITING_REVIEW
    review.submit(first, acknowledged=[w.key for w in review.warnings(first.match)])
    assert state() == review.RoomState.AWAITING_REVIEW
    review.accept(first, user=people["director"])
    assert state() == review.RoomState.WAITING
    assert list(t.desk_entries.values_list("action", "actor_label", "reason"))[:2] == [
        (Action.HELP_RAISED, "moderator", "buzzer 3 is dead"),
        (Action.HELP_CLEARED, "director", ""),
    ]
    assert Match.objects.get(pk=first.match_id).status == Match.Status.ENDED
