"""Rewrite the stored submissions and reports in the order of their random ids.

PostgreSQL appends new rows to the end of a table's heap, so the physical order of the rows (their
``ctid``) follows arrival, finer than the hour the rows themselves keep. ``CLUSTER ... USING`` the
primary key rewrites each table in random-id order (the reports' key is (survey, random id), and
PostgreSQL 15 clusters each of its partitions by it), after which nothing in storage orders the
reports by arrival either. It takes an exclusive lock on each table while it runs (seconds for a
million rows), so run it in a quiet hour, e.g. nightly from cron. SQLite needs nothing: a table
whose primary key is an integer is stored in that key's order, which is random here.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.db import connection

from surveys.models import Report, Submission


class Command(BaseCommand):
    help = "Rewrite submissions and reports in random-id order, so storage keeps no arrival order."

    def handle(self, *args: Any, **options: Any) -> None:
        if connection.vendor != "postgresql":
            self.stdout.write("Nothing to do: this database stores rows in primary-key (random) order.")
            return
        with connection.cursor() as cursor:
            for model in (Submission, Report):
                table = connection.ops.quote_name(model._meta.db_table)
                cursor.execute(
                    "SELECT i.indexrelid::regclass::text FROM pg_index i WHERE i.indrelid = %s::regclass "
                    "AND i.indisprimary",
                    [model._meta.db_table],
                )
                (index,) = cursor.fetchone()
                cursor.execute(f"CLUSTER {table} USING {index}")  # regclass text: quoted where needed
                cursor.execute(f"ANALYZE {table}")
                self.stdout.write(f"{model._meta.db_table}: rewritten in random-id order")
