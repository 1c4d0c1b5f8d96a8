# The command index. `make run` and `make test` are the README's two commands.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000
PYTEST := $(PY) -m pytest

.PHONY: install run serve test test-fast test-python test-js test-browser lint format migrations-check bench bench-peers experiments clean

$(VENV)/.installed: requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed  ## virtualenv with runtime and test dependencies

run: install  ## migrate, load the demo survey, serve on $(PORT) (SQLite unless DATABASE_URL is set)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_demo
	$(PY) manage.py runserver 0.0.0.0:$(PORT)

serve: install  ## production: gunicorn + whitenoise; needs SECRET_KEY, ALLOWED_HOSTS, DEBUG=false
	DEBUG=false $(PY) manage.py collectstatic --noinput --verbosity 0
	DEBUG=false $(PY) manage.py migrate --noinput
	DEBUG=false $(VENV)/bin/gunicorn config.wsgi --bind 0.0.0.0:$(PORT) --workers $${WEB_CONCURRENCY:-3}

test: install test-python test-js  ## every test: Python (with statistical and browser), JS

test-python: install
	$(PYTEST)

test-fast: install  ## the quick loop: no browser, no long simulations
	$(PYTEST) -m "not browser and not statistical"

test-browser: install
	$(PYTEST) -m browser

test-js:
	node --test tests/js/

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

migrations-check: install
	$(PY) manage.py makemigrations --check --dry-run

bench: install  ## benchmarks; results are written down in docs/benchmarks.md
	$(PY) -m bench.mechanisms

PEERS_VENV := bench/.venv-peers

$(PEERS_VENV)/.installed: bench/requirements-peers.txt
	test -x $(PEERS_VENV)/bin/python || $(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r bench/requirements-peers.txt
	touch $@

bench-peers: $(PEERS_VENV)/.installed  ## Murmur vs pure-LDP and multi-freq-ldpy (issue 7), in their own virtualenv
	PYTHONPATH=. $(PEERS_VENV)/bin/python -m bench.peers

experiments: install  ## the source documents' experiments, full repetitions -> docs/experiments/
	$(PY) -m ldp.experiments all

clean:
	rm -rf $(VENV) staticfiles
