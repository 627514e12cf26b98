"""Split ``Match.state`` into the immutable spec, the live state and the ruling record."""

import secrets

from django.db import migrations, models

SPEC_KEYS = ("config", "teams", "players", "tossups", "bonuses")
RECORD_KEYS = ("history", "adjustments", "protests")


def split_states(apps, schema_editor):
    Match = apps.get_model("competition", "Match")
    for match in Match.objects.all().iterator():
        state = match.state or {}
        if "config" not in state:  # never built (or already split): nothing to move
            continue
        match.spec = {k: state[k] for k in SPEC_KEYS}
        match.records = {k: state.get(k, []) for k in RECORD_KEYS}
        match.state = {k: v for k, v in state.items() if k not in SPEC_KEYS + RECORD_KEYS}
        match.spec_key = secrets.token_hex(8)
        match.records_key = secrets.token_hex(8)
        match.save(update_fields=["spec", "records", "state", "spec_key", "records_key"])


def join_states(apps, schema_editor):
    Match = apps.get_model("competition", "Match")
    for match in Match.objects.all().iterator():
        if not match.spec:
            continue
        match.state = {**match.state, **match.records, **match.spec}
        match.save(update_fields=["state"])


class Migration(migrations.Migration):
    dependencies = [("competition", "0003_live_hardening")]

    operations = [
        migrations.AddField(
            model_name="match",
            name="spec",
            field=models.JSONField(default=dict, help_text="game.MatchSpec: config, teams, seats, questions"),
        ),
        migrations.AddField(
            model_name="match",
            name="spec_key",
            field=models.CharField(blank=True, help_text="new on every write of spec", max_length=32),
        ),
        migrations.AddField(
            model_name="match",
            name="records",
            field=models.JSONField(default=dict, help_text="history, adjustments, protests"),
        ),
        migrations.AddField(
            model_name="match",
            name="records_key",
            field=models.CharField(blank=True, help_text="new on every write of records", max_length=32),
        ),
        migrations.AlterField(
            model_name="match",
            name="state",
            field=models.JSONField(default=dict, help_text="the live state (MatchState.live_dict)"),
        ),
        migrations.RunPython(split_states, join_states),
    ]
