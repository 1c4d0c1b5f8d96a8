"""Django's database cache with an atomic ``incr``: the production default without Redis.

With ``DEBUG`` off and no ``CACHE_URL``, the cache (estimates, charts and every rate-limit
counter) is a table on the primary database, so every worker and server counts the same window.
Django's ``DatabaseCache`` inherits ``BaseCache.incr``, a ``get`` followed by a ``set``: two
workers can both read 5 and write 6, and the ``set`` moves the entry's expiry, which would stretch
a rate-limit window. Here the row is read and rewritten in one transaction that holds its lock
(``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite's ``BEGIN IMMEDIATE``, set in config/settings.py,
takes the database's write lock), and its expiry is left as it was.
"""

from __future__ import annotations

import base64
import pickle
from typing import Any

from django.core.cache.backends.db import DatabaseCache as DjangoDatabaseCache
from django.db import connections, models, router, transaction
from django.utils import timezone


class DatabaseCache(DjangoDatabaseCache):
    _table: str  # set by BaseDatabaseCache.__init__; django-stubs leave it out

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> Any:
        key = self.make_and_validate_key(key, version=version)
        alias = router.db_for_write(self.cache_model_class)
        connection = connections[alias]
        table = connection.ops.quote_name(self._table)
        lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
        expression = models.Expression(output_field=models.DateTimeField())
        converters = connection.ops.get_db_converters(expression) + expression.get_db_converters(connection)
        with transaction.atomic(using=alias), connection.cursor() as cursor:
            cursor.execute(f"SELECT value, expires FROM {table} WHERE cache_key = %s{lock}", [key])
            row = cursor.fetchone()
            if row is not None:
                expires = row[1]
                for converter in converters:
                    expires = converter(expires, expression, connection)
                if expires < timezone.now():
                    row = None
            if row is None:
                raise ValueError(f"Key '{key}' not found")
            value = pickle.loads(base64.b64decode(connection.ops.process_clob(row[0]).encode())) + delta
            encoded = base64.b64encode(pickle.dumps(value, self.pickle_protocol)).decode("latin1")
            cursor.execute(f"UPDATE {table} SET value = %s WHERE cache_key = %s", [encoded, key])
        return value
