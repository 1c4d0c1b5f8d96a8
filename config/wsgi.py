from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

# One BLAS thread per process unless the operator says otherwise: several workers share the cores
# (config/gunicorn.conf.py). Set before the app imports numpy.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
