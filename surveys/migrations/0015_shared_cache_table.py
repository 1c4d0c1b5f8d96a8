"""The table of the production cache (CACHE_URL's default db://murmur_cache, surveys/cache.py).

Created by the migration, so that `migrate` (make run, make serve, the tests, CI) leaves nothing
to remember; the same DDL as `manage.py createcachetable`, which skips a table that exists.
"""

from django.core.management.commands.createcachetable import Command as CreateCacheTable
from django.db import migrations

TABLE = "murmur_cache"


def create_table(apps, schema_editor):
    command = CreateCacheTable()
    command.verbosity = 0
    command.create_table(schema_editor.connection.alias, TABLE, dry_run=False)


def drop_table(apps, schema_editor):
    if TABLE in schema_editor.connection.introspection.table_names():
        schema_editor.execute(f"DROP TABLE {schema_editor.quote_name(TABLE)}")


class Migration(migrations.Migration):
    dependencies = [
        ("surveys", "0014_randomization_memo_gamma"),
    ]

    operations = [migrations.RunPython(create_table, drop_table, elidable=False)]
