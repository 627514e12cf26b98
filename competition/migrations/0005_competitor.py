"""Identities across matches (``Competitor``): every existing seat and team gets one of its own.

One identity per (match, player) and per (match, team) — never merged by display name: two
players called "Alex" in different matches may be different people; organisers merge them in
the admin. A bot's team shares its bot's identity. Handles are the display names, made unique
with a number ("Alex", "Alex 2"…)."""

import django.db.models.deletion
import django.db.models.functions.text
from django.db import migrations, models


def give_identities(apps, schema_editor):
    Competitor = apps.get_model("competition", "Competitor")
    Player = apps.get_model("competition", "Player")
    Team = apps.get_model("competition", "Team")
    taken = {h.lower() for h in Competitor.objects.values_list("handle", flat=True)}

    def fresh(base: str, kind: str):
        base = base.strip()[:90] or kind
        n = 1
        while (handle := base if n == 1 else f"{base} {n}").lower() in taken:
            n += 1
        taken.add(handle.lower())
        return Competitor.objects.create(handle=handle, kind=kind)

    for player in Player.objects.filter(competitor__isnull=True).order_by("id").iterator():
        player.competitor = fresh(player.name, "bot" if player.kind == "bot" else "human")
        player.save(update_fields=["competitor"])
    for team in Team.objects.filter(competitor__isnull=True).order_by("id").iterator():
        bot = (
            Player.objects.filter(team=team, kind="bot").order_by("id").first()
            if team.kind == "bot"
            else None
        )
        team.competitor = (
            bot.competitor
            if bot is not None
            else fresh(team.name, team.kind if team.kind == "bot" else "team")
        )
        team.save(update_fields=["competitor"])


class Migration(migrations.Migration):
    dependencies = [("competition", "0004_match_spec_live_state")]

    operations = [
        migrations.CreateModel(
            name="Competitor",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("handle", models.CharField(max_length=100)),
                (
                    "kind",
                    models.CharField(
                        choices=[("human", "Human"), ("team", "Team"), ("bot", "Bot")], max_length=10
                    ),
                ),
                (
                    "secret_hash",
                    models.CharField(blank=True, help_text="sha256 of the owner's secret", max_length=64),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["handle"],
                "constraints": [
                    models.UniqueConstraint(
                        django.db.models.functions.text.Lower("handle"), name="competitor_handle_unique_ci"
                    )
                ],
            },
        ),
        migrations.AddField(
            model_name="player",
            name="competitor",
            field=models.ForeignKey(
                blank=True,
                help_text="the person or bot across matches",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="players",
                to="competition.competitor",
            ),
        ),
        migrations.AddField(
            model_name="team",
            name="competitor",
            field=models.ForeignKey(
                blank=True,
                help_text="the identity across matches (a bot's team: the bot's)",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="teams",
                to="competition.competitor",
            ),
        ),
        migrations.RunPython(give_identities, migrations.RunPython.noop),
    ]
