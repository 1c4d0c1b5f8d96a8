# The command index. `make run` and `make test` are the README's two commands.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000
# pytest keeps its compiled test modules (rewritten asserts) in __pycache__ even where the shell sets
# PYTHONDONTWRITEBYTECODE: each worker's collection then takes 5.7 s instead of 11.3 s after the first run.
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest
# pytest-xdist workers: one a core, each taking a whole module (the statistical tests of a module
# share one cached simulation), in the order tests/conftest.py sorts them (the long ones first, so
# the workers finish together; xdist would otherwise start the modules with the most tests first and
# leave a long module of few tests, such as the 600 browser respondents, for the end).
# The long simulations (marker `slow`) run only in test-all and CI;
# the submit fuzz runs the Hypothesis profile "dev" (300 bodies) or "ci" (10,000), tests/conftest.py.
WORKERS ?= auto
XDIST := -n $(WORKERS) --dist loadscope --no-loadscope-reorder

.PHONY: bench-submit bench-dashboard install install-dev run serve test test-all test-fast test-python test-python-all test-django test-js test-browser lint format typecheck migrations-check messages i18n-check bench bench-peers experiments clean screenshots

# Two stamps: `make run` needs only the runtime dependencies; tests and tools add the dev ones.
$(VENV)/.installed-runtime: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed-runtime requirements-dev.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed-runtime  ## virtualenv with the runtime dependencies (what `make run` needs)

# What the browser tests inject into pages (axe-core), pinned in tests/browser/package-lock.json.
AXE_STAMP := tests/browser/node_modules/.installed
$(AXE_STAMP): tests/browser/package.json tests/browser/package-lock.json
	npm ci --prefix tests/browser --no-audit --no-fund --silent
	touch $@

install-dev: $(VENV)/.installed-dev $(AXE_STAMP)  ## ... plus the test and tool dependencies (and axe-core from npm)

run: install  ## migrate, load the demo surveys, serve on http://127.0.0.1:$(PORT) (SQLite unless DATABASE_URL is set)
	$(PY) manage.py migrate --noinput --verbosity 0
	@echo
	$(PY) manage.py load_demo --base-url http://127.0.0.1:$(PORT)
	@echo
	@echo "Murmur is starting at http://127.0.0.1:$(PORT)/  (Ctrl-C stops it)"
	@echo
	$(PY) manage.py runserver 127.0.0.1:$(PORT)

serve: install  ## production: gunicorn + whitenoise and the job worker beside it; needs SECRET_KEY, ALLOWED_HOSTS, DEBUG=false
	DEBUG=false $(PY) manage.py collectstatic --noinput --verbosity 0
	DEBUG=false $(PY) manage.py migrate --noinput
	DEBUG=false $(PY) manage.py run_jobs & jobs=$$!; trap 'kill $$jobs 2>/dev/null' EXIT INT TERM; \
	DEBUG=false $(VENV)/bin/gunicorn --config config/gunicorn.conf.py --bind 0.0.0.0:$(PORT)

test: install-dev test-python test-js  ## the loop: every test but the long simulations (browser and privacy tests included), in parallel, then JS

test-all: install-dev test-js test-python-all  ## every test: JS, then Python with the long simulations and the 10,000-body fuzz

test-python: install-dev  ## PYTEST_ARGS adds pytest options (so do the targets below)
	HYPOTHESIS_PROFILE=dev $(PYTEST) $(XDIST) -m "not slow" $(PYTEST_ARGS)

test-python-all: install-dev
	HYPOTHESIS_PROFILE=ci $(PYTEST) $(XDIST) $(PYTEST_ARGS)

test-django: install-dev  ## the tests that touch Django and the database (CI runs them on SQLite; everything on PostgreSQL)
	HYPOTHESIS_PROFILE=dev $(PYTEST) $(XDIST) tests/surveys tests/browser $(PYTEST_ARGS)

test-fast: install-dev  ## the quickest loop: make test without the browser tests and node
	HYPOTHESIS_PROFILE=dev $(PYTEST) $(XDIST) -m "not browser and not slow" $(PYTEST_ARGS)

screenshots: install-dev  ## docs/screenshots/: the main pages in Korean and English at 1280 and 390 px (needs fonts-noto-cjk)
	MURMUR_SCREENSHOTS=1 $(PYTEST) tests/browser/test_walkthrough.py tests/browser/test_phone_tables.py -q

test-browser: install-dev
	$(PYTEST) $(XDIST) -m browser $(PYTEST_ARGS)

test-js:
	node --test --test-concurrency=2 tests/js/  # node's default is one file at a time on 2 cores

lint: install-dev typecheck  ## ruff (rules and format) and mypy
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install-dev
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

typecheck: install-dev  ## mypy with django-stubs over ldp/ and surveys/ (config in pyproject.toml)
	$(VENV)/bin/mypy ldp surveys

migrations-check: install
	$(PY) manage.py makemigrations --check --dry-run

messages: install  ## update locale/ko (makemessages for django and djangojs, then compilemessages); translate, commit .po and .mo
	$(PY) manage.py i18n

i18n-check: install  ## fails if makemessages would change a catalog, a ko message is untranslated or fuzzy, or a .mo is stale
	$(PY) manage.py i18n --check

bench: install  ## benchmarks; results are written down in docs/benchmarks.md
	$(PY) -m bench.mechanisms
	$(PY) -m bench.numeric

bench-submit: install  ## Murmur's submit endpoint vs a bare baseline view (wrk, gunicorn, PostgreSQL on 127.0.0.1)
	$(PY) -m bench.submit

bench-dashboard: install  ## results pages at 1,000,000 responses (PostgreSQL, Redis on 127.0.0.1)
	$(PY) -m bench.dashboard

PEERS_VENV := bench/.venv-peers

$(PEERS_VENV)/.installed: bench/requirements-peers.txt
	test -x $(PEERS_VENV)/bin/python || $(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r bench/requirements-peers.txt
	touch $@

bench-peers: $(PEERS_VENV)/.installed  ## Murmur vs pure-LDP and multi-freq-ldpy, in their own virtualenv
	PYTHONPATH=. $(PEERS_VENV)/bin/python -m bench.peers

experiments: install  ## the source documents' experiments, full repetitions -> docs/experiments/
	$(PY) -m ldp.experiments all

clean:
	rm -rf $(VENV) staticfiles
