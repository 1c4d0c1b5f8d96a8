"""gunicorn's settings for ``make serve``: workers that start warm and share the cores.

The master imports the app once (``preload_app``) together with numpy, scipy, matplotlib and every
view, compiles the templates and loads the translations, then forks: a fresh worker answers its
first request without paying for any of it. Each worker does its linear algebra on one BLAS
thread, so N workers on N cores do not start N x cores threads that fight for them; an operator's
own ``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS`` still win.
``bench/warm.py`` measures both (docs/benchmarks.md).

Once warm, every object then alive is moved out of the cyclic garbage collector's reach
(``gc.freeze()``, as the ``gc`` module's documentation recommends before forking): the preloaded
app is about 275,000 tracked objects, which each full collection in each worker walked again (about
90 ms on a quiet core, a pause of a request), and writing their collector fields made the workers
copy the master's pages. Objects made after the fork are collected as before.

Environment: ``WEB_CONCURRENCY`` workers (3), ``WEB_TIMEOUT`` seconds before a silent worker is
killed and replaced (30), ``WEB_PRELOAD=false`` to import the app in each worker instead.
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
from typing import Any

# Before anything imports numpy: OpenBLAS, OpenMP and MKL size their thread pools when loaded.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

wsgi_app = "config.wsgi:application"
workers = int(os.environ.get("WEB_CONCURRENCY", "3"))
timeout = int(os.environ.get("WEB_TIMEOUT", "30"))
preload_app = os.environ.get("WEB_PRELOAD", "true").lower() not in ("0", "false", "no", "off")

#: What the first request would otherwise import: the numeric stack and the modules views import
#: inside functions (charts import matplotlib lazily).
WARM_MODULES = (
    "numpy",
    "scipy.linalg",
    "scipy.optimize",
    "scipy.sparse",
    "scipy.special",
    "scipy.stats",
    "matplotlib",
    "matplotlib.figure",
    "matplotlib.cm",
    "matplotlib.dates",
    "ldp",
    "ldp.registry",
)

logger = logging.getLogger("gunicorn.error")


def warm() -> None:
    """Import what every page needs, compile every template and load every translation catalog."""
    from pathlib import Path

    from django.conf import settings
    from django.template import TemplateDoesNotExist, TemplateSyntaxError
    from django.template.loader import get_template
    from django.urls import get_resolver
    from django.utils import translation

    for name in WARM_MODULES:
        importlib.import_module(name)
    _patterns = get_resolver().url_patterns  # imports config.urls, and with it every view, kind and ldp module
    for directory in settings.TEMPLATES[0]["DIRS"]:
        for path in sorted(Path(directory).rglob("*.html")):
            try:
                get_template(path.relative_to(directory).as_posix())
            except (TemplateDoesNotExist, TemplateSyntaxError):  # a partial compiled with its page
                continue
    for code, _name in settings.LANGUAGES:
        with translation.override(code):  # activating a language loads its catalogs
            pass


def when_ready(server: Any) -> None:
    """In the master, before the first fork: warm the preloaded app, then drop any connection a
    worker must not share."""
    if not server.cfg.preload_app:
        return
    from django.core.cache import close_caches
    from django.db import connections

    warm()
    connections.close_all()
    close_caches()
    freeze()
    logger.info("Warmed the app before forking workers")


def post_worker_init(worker: Any) -> None:
    """Without preloading, each worker warms itself before it accepts a request."""
    if not worker.cfg.preload_app:
        warm()
        freeze()


def freeze() -> None:
    """Collect what warming left as garbage, then keep every object still alive out of later
    collections: they live as long as the process, and a full collection would walk them all."""
    gc.collect()
    gc.freeze()
