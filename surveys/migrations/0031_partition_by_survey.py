"""Reports and tally cells keyed by survey; on PostgreSQL partitioned by it (``PARTITION BY HASH``).

Both tables gain ``survey_id`` (denormalized: a report's is its submission's survey, a cell's its
randomization's question's survey) and keys that lead with it: ``surveys_report`` is keyed
``(survey_id, id)`` and unique on ``(survey_id, submission_id, question_id)``,
``surveys_tallycell`` on ``(survey_id, randomization_id, shard, cell)``. A partitioned table's
primary and unique keys must hold the partition key, and Citus asks the same of its distribution
column (``docs/deployment.md``).

Django cannot migrate a primary key to a composite one, so the state changes alone
(:class:`~django.db.migrations.SeparateDatabaseAndState`: each model deleted and created again,
which nothing else references) sit between two ``RunPython`` steps that see the old and the new
models:

- forwards, :func:`rebuild`: each table is renamed aside (its key constraints too, whose names
  PostgreSQL keeps schema-wide), created again from the new model by Django's schema editor (on
  PostgreSQL with ``PARTITION BY HASH (survey_id)`` and :data:`PARTITIONS` partitions), filled
  from the old one with its survey joined in, checked row for row, and the old one dropped. The
  indexes and foreign keys are the schema editor's own (created at the end of the migration, on the
  filled table; on a partitioned table PostgreSQL makes each partition's). SQLite has no
  partitioning: the same columns and keys, one table.
- backwards, the same in reverse: :func:`set_aside` with the new models, :func:`restore` with the
  old, so the migration is reversible (the old keys hold: ids are random 63-bit integers, unique
  across surveys).

On PostgreSQL the whole migration is one transaction; the copy rewrites every stored report once
(7 s for 1,000,000 reports, 163 s for 10,000,000 on the benchmark machine: ``docs/benchmarks.md``),
holding the tables' locks meanwhile: a deployment step to announce.
"""

from __future__ import annotations

from typing import Any

import django.db.models.deletion
from django.db import migrations, models

import surveys.models

#: Hash partitions of each table on PostgreSQL. A hash partitioning cannot be split later without
#: rewriting the table, so this is chosen for growth: at 16, a million reports make partitions of
#: about 60,000 rows, and a survey's reads touch one sixteenth of the index; Citus's default shard
#: count is 32, a multiple, should the tables later be distributed. Changing it needs a migration
#: that rebuilds the tables like this one.
PARTITIONS = 16

#: For each table: its columns (new order), and the SELECT that fills them from the old table
#: (aliased ``old``), joining in the survey.
COPIES = {
    "surveys_report": (
        ("survey_id", "id", "submission_id", "question_id", "randomization_id", "packed"),
        "SELECT s.survey_id, old.id, old.submission_id, old.question_id, old.randomization_id, old.packed "
        "FROM {old} old JOIN surveys_submission s ON s.id = old.submission_id",
    ),
    "surveys_tallycell": (
        ("survey_id", "randomization_id", "shard", "cell", "count"),
        "SELECT q.survey_id, old.randomization_id, old.shard, old.cell, old.count "
        "FROM {old} old JOIN surveys_randomization r ON r.id = old.randomization_id "
        "JOIN surveys_question q ON q.id = r.question_id",
    ),
}
#: The columns the backwards step copies back (the old tables have no survey_id).
OLD_COLUMNS = {
    "surveys_report": ("id", "submission_id", "question_id", "randomization_id", "packed"),
    "surveys_tallycell": ("randomization_id", "shard", "cell", "count"),
}
MODELS = {"surveys_report": "Report", "surveys_tallycell": "TallyCell"}


def aside(table: str) -> str:
    return f"{table}_before_0031"


def _rename_aside(schema_editor: Any, table: str) -> None:
    """Rename ``table`` to :func:`aside`, with its key and check constraints (PostgreSQL names a key's
    index schema-wide, and the new table's would collide; a check's would get a suffix)."""
    quote, connection = schema_editor.quote_name, schema_editor.connection
    schema_editor.execute(f"ALTER TABLE {quote(table)} RENAME TO {quote(aside(table))}")
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype IN ('p', 'u', 'c')",
            [aside(table)],
        )
        names = [name for (name,) in cursor.fetchall()]
    for name in names:
        schema_editor.execute(
            f"ALTER TABLE {quote(aside(table))} RENAME CONSTRAINT {quote(name)} TO {quote(name + '_before_0031')}"
        )


def _create(schema_editor: Any, model: Any, partitioned: bool) -> None:
    """Create the model's table; on PostgreSQL, if ``partitioned``, hashed by survey into :data:`PARTITIONS`."""
    if not (partitioned and schema_editor.connection.vendor == "postgresql"):
        schema_editor.create_model(model)
        return
    table, quote = model._meta.db_table, schema_editor.quote_name
    schema_editor.sql_create_table = "CREATE TABLE %(table)s (%(definition)s) PARTITION BY HASH (survey_id)"
    try:
        schema_editor.create_model(model)  # indexes and foreign keys deferred to the migration's end
    finally:
        del schema_editor.sql_create_table  # back to the class's statement
    for remainder in range(PARTITIONS):
        schema_editor.execute(
            f"CREATE TABLE {quote(f'{table}_p{remainder}')} PARTITION OF {quote(table)} "
            f"FOR VALUES WITH (MODULUS {PARTITIONS}, REMAINDER {remainder})"
        )


def _copy(schema_editor: Any, table: str, columns: tuple[str, ...], select: str) -> None:
    """INSERT ... SELECT from the set-aside table, refusing to lose a row, then drop the old table."""
    quote = schema_editor.quote_name
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {quote(table)} ({', '.join(columns)}) {select.format(old=quote(aside(table)))}")
        cursor.execute(f"SELECT (SELECT count(*) FROM {quote(table)}), (SELECT count(*) FROM {quote(aside(table))})")
        copied, before = cursor.fetchone()
    if copied != before:
        raise RuntimeError(f"{table}: {before} rows before, {copied} copied; nothing changed")
    schema_editor.execute(f"DROP TABLE {quote(aside(table))}")


def rebuild(apps: Any, schema_editor: Any) -> None:
    """Forwards, with the new models: each table rebuilt keyed (and on PostgreSQL partitioned) by survey."""
    for table, (columns, select) in COPIES.items():
        _rename_aside(schema_editor, table)
        _create(schema_editor, apps.get_model("surveys", MODELS[table]), partitioned=True)
        _copy(schema_editor, table, columns, select)


def set_aside(apps: Any, schema_editor: Any) -> None:
    """Backwards, with the new models: rename the tables aside for :func:`restore`."""
    for table in COPIES:
        _rename_aside(schema_editor, table)


def restore(apps: Any, schema_editor: Any) -> None:
    """Backwards, with the old models: the plain tables again, filled from the set-aside ones."""
    for table, columns in OLD_COLUMNS.items():
        _create(schema_editor, apps.get_model("surveys", MODELS[table]), partitioned=False)
        _copy(schema_editor, table, columns, f"SELECT {', '.join(columns)} FROM {{old}} old")


def survey_key() -> models.ForeignKey[Any, Any]:
    """Both models' ``survey``: the denormalized key every row carries (the primary key's index
    leads with it, so it needs none of its own)."""
    return models.ForeignKey(
        db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="surveys.survey"
    )


class Migration(migrations.Migration):
    dependencies = [
        ("surveys", "0030_tallydelta"),
    ]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, restore),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="Report"),
                migrations.CreateModel(
                    name="Report",
                    fields=[
                        (
                            "pk",
                            models.CompositePrimaryKey(
                                "survey", "id", blank=True, editable=False, primary_key=True, serialize=False
                            ),
                        ),
                        ("id", models.BigIntegerField(default=surveys.models.random_id, editable=False)),
                        ("packed", models.BinaryField()),
                        ("survey", survey_key()),
                        (
                            "submission",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="reports",
                                to="surveys.submission",
                            ),
                        ),
                        (
                            "question",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.RESTRICT,
                                related_name="reports",
                                to="surveys.question",
                            ),
                        ),
                        (
                            "randomization",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.RESTRICT,
                                related_name="reports",
                                to="surveys.randomization",
                            ),
                        ),
                    ],
                    options={
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("survey", "submission", "question"), name="one_report_per_question"
                            )
                        ],
                    },
                ),
                migrations.DeleteModel(name="TallyCell"),
                migrations.CreateModel(
                    name="TallyCell",
                    fields=[
                        (
                            "pk",
                            models.CompositePrimaryKey(
                                "survey",
                                "randomization",
                                "shard",
                                "cell",
                                blank=True,
                                editable=False,
                                primary_key=True,
                                serialize=False,
                            ),
                        ),
                        ("shard", models.PositiveSmallIntegerField()),
                        ("cell", models.IntegerField()),
                        ("count", models.BigIntegerField(default=0)),
                        ("survey", survey_key()),
                        (
                            "randomization",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="cells",
                                to="surveys.randomization",
                            ),
                        ),
                    ],
                ),
            ],
        ),
        migrations.RunPython(rebuild, set_aside),
    ]
