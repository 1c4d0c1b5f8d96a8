# Sharded tally cells, sharded hourly counters, retired randomizations, random ids (issue 12).

import secrets

import django.db.models.deletion
from django.db import migrations, models

import surveys.models

RANDOM_ID_FLOOR = 2**32


def tallies_to_cells(apps, schema_editor):
    """Each old running tally becomes shard 0's cells; all but each question's newest version retire."""
    Tally = apps.get_model("surveys", "Tally")
    TallyCell = apps.get_model("surveys", "TallyCell")
    Randomization = apps.get_model("surveys", "Randomization")
    cells = []
    for tally in Tally.objects.all().iterator():
        cells.append(TallyCell(randomization_id=tally.randomization_id, shard=0, cell=-1, count=tally.n))
        cells.extend(
            TallyCell(randomization_id=tally.randomization_id, shard=0, cell=i, count=c)
            for i, c in enumerate(tally.counts)
            if c
        )
    TallyCell.objects.bulk_create(cells, batch_size=5000)
    newest = Randomization.objects.filter(question=models.OuterRef("question")).order_by("-version").values("pk")[:1]
    Randomization.objects.exclude(pk=models.Subquery(newest)).update(retired=True)


def rekey(apps, schema_editor):
    """Give existing submissions and reports random ids, so old rows carry no arrival order either."""
    connection = schema_editor.connection
    quote = connection.ops.quote_name
    for table, references in (("surveys_submission", [("surveys_report", "submission_id")]), ("surveys_report", [])):
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT id FROM {quote(table)} WHERE id < %s", [RANDOM_ID_FLOOR])
            old = [row[0] for row in cursor.fetchall()]
            if not old:
                continue
            cursor.execute("CREATE TEMPORARY TABLE murmur_rekey (old BIGINT PRIMARY KEY, new BIGINT NOT NULL)")
            pairs = [(o, RANDOM_ID_FLOOR + secrets.randbelow(2**63 - RANDOM_ID_FLOOR)) for o in old]
            for start in range(0, len(pairs), 5000):
                chunk = pairs[start : start + 5000]
                cursor.execute(
                    "INSERT INTO murmur_rekey (old, new) VALUES " + ", ".join(["(%s, %s)"] * len(chunk)),
                    [v for pair in chunk for v in pair],
                )
            for other, column in references:
                cursor.execute(
                    f"UPDATE {quote(other)} SET {quote(column)} = "
                    f"(SELECT new FROM murmur_rekey WHERE old = {quote(other)}.{quote(column)}) "
                    f"WHERE {quote(column)} < %s",
                    [RANDOM_ID_FLOOR],
                )
            cursor.execute(
                f"UPDATE {quote(table)} SET id = (SELECT new FROM murmur_rekey WHERE old = {quote(table)}.id) "
                "WHERE id < %s",
                [RANDOM_ID_FLOOR],
            )
            cursor.execute("DROP TABLE murmur_rekey")


class Migration(migrations.Migration):
    dependencies = [
        ("surveys", "0004_question_mechanism_chosen_automatically"),
    ]

    operations = [
        migrations.CreateModel(
            name="TallyCell",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "randomization", "shard", "cell", blank=True, editable=False, primary_key=True, serialize=False
                    ),
                ),
                (
                    "randomization",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="cells", to="surveys.randomization"
                    ),
                ),
                ("shard", models.PositiveSmallIntegerField()),
                ("cell", models.IntegerField()),
                ("count", models.BigIntegerField(default=0)),
            ],
        ),
        migrations.AddField(
            model_name="randomization",
            name="retired",
            field=models.BooleanField(default=False),
        ),
        migrations.AlterModelOptions(
            name="hourlyresponses",
            options={"ordering": ["survey", "hour", "shard"]},
        ),
        migrations.RemoveConstraint(
            model_name="hourlyresponses",
            name="one_counter_per_survey_hour",
        ),
        migrations.AddField(
            model_name="hourlyresponses",
            name="shard",
            field=models.PositiveSmallIntegerField(default=0),
        ),
        migrations.AddConstraint(
            model_name="hourlyresponses",
            constraint=models.UniqueConstraint(
                fields=("survey", "hour", "shard"), name="one_counter_per_survey_hour_shard"
            ),
        ),
        migrations.RunPython(tallies_to_cells, migrations.RunPython.noop),
        migrations.DeleteModel(name="Tally"),
        migrations.AlterField(
            model_name="report",
            name="id",
            field=models.BigIntegerField(
                default=surveys.models.random_id, editable=False, primary_key=True, serialize=False
            ),
        ),
        migrations.AlterField(
            model_name="submission",
            name="id",
            field=models.BigIntegerField(
                default=surveys.models.random_id, editable=False, primary_key=True, serialize=False
            ),
        ),
        migrations.RunPython(rekey, migrations.RunPython.noop),
    ]
