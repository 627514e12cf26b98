# One name per concept (competition/vocabulary.py): renames keep every stored row.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("competition", "0005_competitor"),
    ]

    operations = [
        migrations.RenameField(model_name="matchevent", old_name="type", new_name="event"),
        migrations.AlterField(
            model_name="matchevent",
            name="event",
            field=models.CharField(help_text='the event\'s name (docs/PROTOCOL.md "Events")', max_length=50),
        ),
        migrations.RenameField(model_name="buzz", old_name="client_pressed_at", new_name="client_time"),
        migrations.AlterField(
            model_name="buzz",
            name="client_time",
            field=models.FloatField(help_text="the buzzer's own clock at the press (logged only)", null=True),
        ),
        migrations.AlterField(
            model_name="flag",
            name="problem",
            field=models.CharField(
                choices=[
                    ("lacks_factuality", "Lacks factuality"),
                    ("lacks_specificity", "Lacks specificity / false presupposition"),
                    ("subjectivity", "Subjectivity"),
                    ("ambiguity", "Ambiguity / multiple acceptable answers"),
                ],
                max_length=30,
            ),
        ),
        migrations.AlterField(
            model_name="flag",
            name="role",
            field=models.CharField(
                choices=[("player", "player"), ("moderator", "moderator"), ("editor", "editor")], max_length=20
            ),
        ),
        migrations.AlterModelOptions(
            name="bonus", options={"ordering": ["packet_id", "number"], "verbose_name_plural": "bonuses"}
        ),
        migrations.AlterModelOptions(
            name="buzz", options={"ordering": ["match_id", "seq"], "verbose_name_plural": "buzzes"}
        ),
        migrations.AlterModelOptions(name="match", options={"verbose_name_plural": "matches"}),
        migrations.AlterModelOptions(name="outbox", options={"ordering": ["id"], "verbose_name_plural": "outbox"}),
    ]
