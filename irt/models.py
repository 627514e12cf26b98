"""The response store shared by live matches and imported response sets, and versioned fits.

A *subject* of a live match is an identity, ``human:#<id>``, ``team:#<id>`` or ``bot:#<id>``
(``competition.models.Competitor``; pages show its current handle); an imported set's is
``<kind>:<name>`` from the file. An *item* is ``tossup:<id>`` for live tossups or the imported
set's own item id.
"""

from __future__ import annotations

from django.db import models

from competition.models import Match, Tossup


class Response(models.Model):
    """One observed 0/1 outcome of a subject on an item (ADVSCORE.md §1)."""

    dataset = models.CharField(max_length=100, db_index=True, help_text="'live' or an imported set's name")
    source = models.CharField(max_length=100, help_text="match:<id> | import:<file name>")
    subject = models.CharField(max_length=200)
    subject_kind = models.CharField(max_length=10, help_text="human | team | bot")
    item = models.CharField(max_length=200)
    tossup = models.ForeignKey(Tossup, null=True, blank=True, on_delete=models.CASCADE)
    match = models.ForeignKey(Match, null=True, blank=True, on_delete=models.CASCADE)
    correct = models.BooleanField()
    position = models.IntegerField(
        null=True, blank=True, help_text="0-based token index of the subject's buzz, when known"
    )

    class Meta:
        unique_together = [("dataset", "source", "subject", "item")]


class Fit(models.Model):
    """One 2PL fit + ADVSCORE over a dataset's responses, keyed by what went in: the same
    responses and settings give the same row (idempotent refits)."""

    class Status(models.TextChoices):
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    dataset = models.CharField(max_length=100, db_index=True)
    snapshot_hash = models.CharField(max_length=64, help_text="sha256 of the sorted responses")
    settings = models.JSONField(default=dict)
    settings_hash = models.CharField(max_length=64)
    seed = models.IntegerField(default=0)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    progress = models.FloatField(default=0.0)
    error = models.TextField(blank=True)
    n_responses = models.IntegerField(default=0)
    n_subjects = models.IntegerField(default=0)
    n_items = models.IntegerField(default=0)
    duration_s = models.FloatField(null=True)
    summary = models.JSONField(default=dict, help_text="mu, kappa, delta, advscore of the dataset")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True)
    # Who runs a RUNNING fit and when it last said so: a fit whose heartbeat is stale was left
    # by a dead worker and is run again (irt.pipeline.fit_scope).
    worker = models.CharField(max_length=64, blank=True, help_text="claim token of the running fit")
    heartbeat_at = models.FloatField(
        null=True, blank=True, help_text="epoch s of the runner's last heartbeat"
    )

    class Meta:
        unique_together = [("dataset", "snapshot_hash", "settings_hash")]
        ordering = ["-created_at"]


class SubjectSkill(models.Model):
    fit = models.ForeignKey(Fit, on_delete=models.CASCADE, related_name="skills")
    subject = models.CharField(max_length=200)
    kind = models.CharField(max_length=10)
    skill = models.FloatField(help_text="β, logits")
    skill_se = models.FloatField(null=True)
    n_responses = models.IntegerField()

    class Meta:
        ordering = ["-skill"]


class ItemScore(models.Model):
    fit = models.ForeignKey(Fit, on_delete=models.CASCADE, related_name="items")
    item = models.CharField(max_length=200)
    tossup = models.ForeignKey(Tossup, null=True, blank=True, on_delete=models.SET_NULL)
    difficulty = models.FloatField(help_text="θ")
    discriminability = models.FloatField(help_text="γ")
    mu = models.FloatField(null=True)
    delta = models.FloatField(null=True)
    kappa = models.FloatField(null=True)
    advscore = models.FloatField(null=True)
    n_responses = models.IntegerField()
    # Buzz positions over exactly the fit's responses (irt.pipeline._buzz_positions); null when
    # no subject of that kind buzzed, or the fit predates them.
    human_buzz_index = models.FloatField(null=True, help_text="humans' mean earliest buzz, 0-based token")
    human_buzz_read = models.FloatField(null=True, help_text="humans' mean share of the tossup read")
    human_buzzes = models.IntegerField(null=True, help_text="humans who buzzed")
    bot_buzz_index = models.FloatField(null=True, help_text="bots' mean earliest buzz, 0-based token")
    bot_buzz_read = models.FloatField(null=True, help_text="bots' mean share of the tossup read")
    bot_buzzes = models.IntegerField(null=True, help_text="bots that buzzed")

    class Meta:
        ordering = ["-advscore"]


class BotEvaluation(models.Model):
    """One offline evaluation of a bot against human buzz points (``manage.py evaluate_bot``, the
    ``tools.tasks.evaluate_bot`` task): how it was run (``spec``: guesser, options, tossup and human
    sources), its progress (0–1) while running, and ``result`` when done: ``metrics`` (the QANTA
    leaderboard numbers of ``irt.botmetrics``), ``reliability``, ``accuracy_by_fraction``,
    ``outcomes`` (per tossup), ``cost_usd``, ``errors``."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    name = models.CharField(max_length=200, help_text="the bot as listed on the leaderboard")
    spec = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    progress = models.FloatField(default=0.0)
    error = models.TextField(blank=True)
    result = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.status})"
