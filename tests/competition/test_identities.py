"""Identities across matches (competition.identities, competition.models.Competitor): claimed at
join with a handle and the tablet's secret, fresh per seat otherwise (never by display name),
merged and split by organisers (the service and the admin actions), and the data migration that
gave existing seats one identity each."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from competition import identities, services
from competition.models import Competitor, Match, Player, Team, Tossup, hash_secret
from tests.support.factories import make_packet

pytestmark = pytest.mark.django_db


def new_match(name: str = "M", bots: list[str] | None = None) -> Match:
    tossups = list(Tossup.objects.all()[:2]) or make_packet(n_tossups=2, n_bonuses=0)[0]
    return services.create_match(
        name=name,
        tossup_ids=[t.id for t in tossups],
        teams=["Red", "Blue"],
        bots=[{"name": b, "weight_class": "light"} for b in bots or []],
    )


def test_a_handle_is_claimed_once_and_reclaimed_with_its_secret() -> None:
    m1, m2 = new_match("one"), new_match("two")
    first = identities.join(code=m1.join_code, name="Alex", team="Red", handle="alex_k")
    assert first.competitor.handle == "alex_k" and first.secret
    assert first.competitor.secret_hash == hash_secret(first.secret)  # only the hash is stored
    assert first.player.competitor == first.competitor

    # Another tablet without the secret cannot take the handle (any case), and nothing is written.
    seats = Player.objects.count()
    with pytest.raises(services.ServiceError) as refused:
        identities.join(
            code=m2.join_code, name="Mallory", team="Red", handle="ALEX_K", identity_secret="guess"
        )
    assert refused.value.code == "seat_taken" and refused.value.extra == {"field": "handle"}
    assert (
        Player.objects.count() == seats and Competitor.objects.filter(handle__iexact="mallory").count() == 0
    )

    # The owner's tablet joins the next match, under another display name: the same identity.
    again = identities.join(
        code=m2.join_code, name="Alexander", team="Blue", handle="alex_k", identity_secret=first.secret
    )
    assert again.competitor == first.competitor and again.secret == ""

    # One identity holds one seat per match.
    with pytest.raises(services.ServiceError, match="already plays in this match"):
        identities.join(
            code=m2.join_code, name="Al", team="Red", handle="alex_k", identity_secret=first.secret
        )

    # A lost tablet: the organiser resets the secret; the old one stops working.
    new_secret = identities.reset_secret(first.competitor)
    m3 = new_match("three")
    with pytest.raises(services.ServiceError):
        identities.join(
            code=m3.join_code, name="Alex", team="Red", handle="alex_k", identity_secret=first.secret
        )
    assert (
        identities.join(
            code=m3.join_code, name="Alex", team="Red", handle="alex_k", identity_secret=new_secret
        ).competitor
        == first.competitor
    )


def test_without_a_handle_every_seat_is_its_own_identity() -> None:
    m1, m2 = new_match("one"), new_match("two")
    a = identities.join(code=m1.join_code, name="Alex", team="Red")
    b = identities.join(code=m2.join_code, name="Alex", team="Red")
    assert a.competitor != b.competitor
    assert {a.competitor.handle, b.competitor.handle} == {"Alex", "Alex 2"}
    assert a.secret and b.secret  # each tablet keeps its own
    # Teams of the same name in two matches are two identities too; a bot seated again is itself.
    assert (
        Team.objects.get(match=m1, name="Red").competitor != Team.objects.get(match=m2, name="Red").competitor
    )


def test_a_bot_is_one_identity_across_matches_and_shares_it_with_its_team() -> None:
    m1, m2 = new_match("one", bots=["tfidf"]), new_match("two", bots=["tfidf"])
    bots = [Player.objects.get(match=m, kind="bot") for m in (m1, m2)]
    assert bots[0].competitor == bots[1].competitor and bots[0].competitor.kind == "bot"
    assert Team.objects.get(match=m1, name="tfidf").competitor == bots[0].competitor
    # Two bots whose names differ only in case in one match are two identities (one subject each).
    m3 = new_match("three", bots=["tfidf", "TFIDF"])
    seated = Player.objects.filter(match=m3, kind="bot")
    assert len({p.competitor_id for p in seated}) == 2 and bots[0].competitor_id in {
        p.competitor_id for p in seated
    }
    for p in seated:
        assert p.team.competitor_id == p.competitor_id


def test_a_seat_given_back_keeps_its_identity_and_leaves_no_orphan() -> None:
    m = new_match()
    joined = identities.join(code=m.join_code, name="Alex", team="Red")
    count = Competitor.objects.count()
    back = identities.join(code=m.join_code, name="Alex", team="Red", secret=joined.player.token)
    assert back.player == joined.player and back.competitor == joined.competitor and back.secret == ""
    assert Competitor.objects.count() == count


def test_merge_and_split() -> None:
    m1, m2 = new_match("one"), new_match("two")
    a = identities.join(code=m1.join_code, name="Alex", team="Red").competitor
    b = identities.join(code=m2.join_code, name="alex", team="Red").competitor
    carol = identities.join(code=m1.join_code, name="Carol", team="Blue").competitor

    with pytest.raises(ValueError, match="played against each other"):
        identities.merge(a, [carol])  # both seated in match one: two people
    red = Team.objects.get(match=m1, name="Red").competitor
    with pytest.raises(ValueError, match="different kinds"):
        identities.merge(a, [red])
    assert Competitor.objects.filter(pk=carol.pk).exists()

    identities.merge(a, [b])
    assert not Competitor.objects.filter(pk=b.pk).exists()
    assert set(a.players.values_list("match_id", flat=True)) == {m1.id, m2.id}

    with pytest.raises(ValueError, match="nothing to split off"):
        identities.split(a, [m1.id, m2.id])
    (new,) = identities.split_by_match(a)
    assert list(a.players.values_list("match_id", flat=True)) == [m1.id]
    assert list(new.players.values_list("match_id", flat=True)) == [m2.id]
    assert new.handle == "Alex 2" and new.kind == "human" and new.secret_hash == ""


def test_admin_lists_identities_and_merges_splits_and_resets() -> None:
    user = get_user_model().objects.create_superuser("admin", password="pw-for-tests-only")
    client = Client()
    client.force_login(user)
    m1, m2 = new_match("one", bots=["tfidf"]), new_match("two")
    a = identities.join(code=m1.join_code, name="Alex", team="Red").competitor
    b = identities.join(code=m2.join_code, name="Alex", team="Red").competitor

    page = client.get("/admin/competition/competitor/?q=alex")
    assert page.status_code == 200 and "Alex 2" in page.content.decode()
    detail = client.get(f"/admin/competition/competitor/{a.pk}/change/").content.decode()
    assert m1.join_code in detail and "seat &#x27;Alex&#x27;" in detail

    url = "/admin/competition/competitor/"
    merged = client.post(url, {"action": "merge_selected", "_selected_action": [a.pk, b.pk]}, follow=True)
    assert "Merged 2 identities into &#x27;Alex&#x27;" in merged.content.decode()
    assert a.players.count() == 2 and not Competitor.objects.filter(pk=b.pk).exists()

    split = client.post(url, {"action": "split_by_match", "_selected_action": [a.pk]}, follow=True)
    assert "New identities: Alex 2" in split.content.decode() and a.players.count() == 1

    reset = client.post(url, {"action": "reset_secret", "_selected_action": [a.pk]}, follow=True)
    secret = reset.content.decode().split("new secret ")[1].split(" ")[0]
    a.refresh_from_db()
    assert a.secret_hash == hash_secret(secret)


def test_the_data_migration_gives_each_old_seat_its_own_identity(transactional_db) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([("competition", "0004_match_spec_live_state")])
    old = executor.loader.project_state([("competition", "0004_match_spec_live_state")]).apps
    OldMatch, OldTeam, OldPlayer = (old.get_model("competition", n) for n in ("Match", "Team", "Player"))
    for code in ("AAAAAA", "BBBBBB"):
        match = OldMatch.objects.create(name=code, join_code=code, preset="naqt")
        red = OldTeam.objects.create(match=match, name="Red", kind="human")
        OldPlayer.objects.create(match=match, team=red, name="Alex", kind="human", token=f"t-{code}-a")
        bot = OldTeam.objects.create(match=match, name="tfidf", kind="bot")
        OldPlayer.objects.create(match=match, team=bot, name="tfidf", kind="bot", token=f"t-{code}-b")
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    alexes = Player.objects.filter(name="Alex").select_related("competitor")
    assert len({p.competitor_id for p in alexes}) == 2  # same name, two matches: two identities
    assert sorted(p.competitor.handle for p in alexes) == ["Alex", "Alex 2"]
    for bot in Player.objects.filter(kind="bot"):
        assert bot.competitor.kind == "bot" and bot.team.competitor_id == bot.competitor_id
    assert not Player.objects.filter(competitor=None).exists()
    assert not Team.objects.filter(competitor=None).exists()
    assert Team.objects.get(match__join_code="AAAAAA", name="Red").competitor.kind == "team"


def test_a_fresh_identity_takes_the_first_free_number_in_one_read(django_assert_max_num_queries) -> None:
    for handle in ("Red", "red 2", "Red 3", "Red 5", "Redwood"):
        Competitor.objects.create(handle=handle, kind=Competitor.Kind.TEAM)
    # One read of the taken handles and the insert, however many "Red n" exist already.
    with django_assert_max_num_queries(4):
        fresh = Competitor.create_fresh("Red", Competitor.Kind.TEAM)
    assert fresh.handle == "Red 4"
    assert Competitor.create_fresh("Red", Competitor.Kind.TEAM).handle == "Red 6"
    assert Competitor.create_fresh("Blue", Competitor.Kind.TEAM).handle == "Blue"
