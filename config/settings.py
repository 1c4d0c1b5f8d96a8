"""Murmur's settings, read from the environment (see docs/settings.md).

SQLite by default, so clone, migrate and run just work; ``DATABASE_URL`` switches to
PostgreSQL. With ``DEBUG`` off the development ``SECRET_KEY`` is refused.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

from config.env import envbool, envcache, envemail, envint, envlist, envproxies, envrates

BASE_DIR = Path(__file__).resolve().parent.parent

DEV_SECRET_KEY = "murmur-development-key-never-use-in-production"
DEBUG = envbool("DEBUG", "true")
SECRET_KEY = os.getenv("SECRET_KEY", DEV_SECRET_KEY)
if not DEBUG and SECRET_KEY == DEV_SECRET_KEY:
    raise ImproperlyConfigured("Set SECRET_KEY: the development key is refused when DEBUG is off.")
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "axes",
    "django_rq",
    "surveys",
]

MIDDLEWARE = [
    # Marks the request, so that work meant for a job refuses to run inline (surveys/jobs/guard.py).
    "surveys.jobs.guard.RequestGuardMiddleware",
    # Drops X-Forwarded-For/-Proto unless the peer is a trusted proxy, before anything reads them.
    "surveys.responding.ratelimits.ForwardedHeadersMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "surveys.headers.SecurityHeadersMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    # Under DEBUG too, Murmur's styled and translated 404 and 500 pages, not Django's technical ones.
    "surveys.views.errors.StyledErrorPagesMiddleware",
    "surveys.timezones.TimezoneMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # Logs what a signed-in organizer changed or exported (surveys/teams/audit.py).
    "surveys.teams.audit.AuditMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Turns django-axes' refusals into the 429 page (last, as axes asks).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "surveys.teams.context.single_sign_on",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.getenv("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        conn_max_age=envint("CONN_MAX_AGE", "0"),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Take the write lock when a transaction starts, so concurrent read-modify-write of a tally
    # waits instead of failing or losing an update.
    DATABASES["default"].setdefault("OPTIONS", {}).update({"transaction_mode": "IMMEDIATE", "timeout": 20})
# Optional streaming replica for the results pages (surveys/replica.py); writes and the builder
# always use the primary. In tests the replica mirrors the primary's connection.
if os.getenv("DATABASE_REPLICA_URL"):
    DATABASES["replica"] = dj_database_url.parse(
        os.environ["DATABASE_REPLICA_URL"], conn_max_age=envint("CONN_MAX_AGE", "0")
    )
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
DATABASE_ROUTERS = ["surveys.replica.ResultsReplicaRouter"]
# Behind PgBouncer in transaction mode a server-side cursor cannot outlive its transaction.
for _database in DATABASES.values():
    _database["DISABLE_SERVER_SIDE_CURSORS"] = envbool("DATABASE_POOLER", "false")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Django's password backend behind django-axes' check, which refuses a throttled login before
# any password is checked.
AUTHENTICATION_BACKENDS = ["surveys.responding.ratelimits.LoginThrottleBackend"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# OpenID Connect sign-on beside password login (surveys/teams/oidc.py), on when OIDC_RP_CLIENT_ID is
# set; then the provider's endpoints and issuer are required. Read by mozilla-django-oidc.
OIDC_RP_CLIENT_ID = os.getenv("OIDC_RP_CLIENT_ID", "")
OIDC_ENABLED = bool(OIDC_RP_CLIENT_ID)
OIDC_REQUIRED = [
    "OIDC_RP_CLIENT_SECRET",
    "OIDC_OP_ISSUER",
    "OIDC_OP_AUTHORIZATION_ENDPOINT",
    "OIDC_OP_TOKEN_ENDPOINT",
    "OIDC_OP_USER_ENDPOINT",
    "OIDC_OP_JWKS_ENDPOINT",
]
if OIDC_ENABLED and (_missing := [name for name in OIDC_REQUIRED if not os.getenv(name)]):
    raise ImproperlyConfigured(f"OIDC_RP_CLIENT_ID is set: set {', '.join(_missing)} too.")
OIDC_RP_CLIENT_SECRET = os.getenv("OIDC_RP_CLIENT_SECRET", "")
OIDC_OP_ISSUER = os.getenv("OIDC_OP_ISSUER", "")
OIDC_OP_AUTHORIZATION_ENDPOINT = os.getenv("OIDC_OP_AUTHORIZATION_ENDPOINT", "")
OIDC_OP_TOKEN_ENDPOINT = os.getenv("OIDC_OP_TOKEN_ENDPOINT", "")
OIDC_OP_USER_ENDPOINT = os.getenv("OIDC_OP_USER_ENDPOINT", "")
OIDC_OP_JWKS_ENDPOINT = os.getenv("OIDC_OP_JWKS_ENDPOINT", "")
OIDC_RP_SIGN_ALGO = os.getenv("OIDC_RP_SIGN_ALGO", "RS256")
OIDC_RP_SCOPES = "openid email"
OIDC_USE_PKCE = True
OIDC_CREATE_USER = envbool("OIDC_CREATE_USER", "true")
OIDC_TIMEOUT = envint("OIDC_TIMEOUT", "10")
OIDC_PROVIDER_NAME = os.getenv("OIDC_PROVIDER_NAME", "")
LOGIN_URL_FAILURE = "/accounts/login/?sso=failed"
if OIDC_ENABLED:
    AUTHENTICATION_BACKENDS.append("surveys.teams.oidc.MurmurOIDCBackend")

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("ko", _("Korean"))]
# Compiled catalogs are committed, so a fresh clone speaks Korean without msgfmt.
LOCALE_PATHS = [BASE_DIR / "locale"]
# The header's language switcher posts to set_language, which keeps the choice in this cookie.
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
# In development whitenoise serves from the finders and rescans on every request.
WHITENOISE_AUTOREFRESH = DEBUG
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Password resets and address checks: SMTP from EMAIL_URL (smtp://user:password@host:587) or
# Django's EMAIL_HOST... variables; the console in development (config/env.py: envemail).
(
    EMAIL_BACKEND,
    EMAIL_HOST,
    EMAIL_PORT,
    EMAIL_HOST_USER,
    EMAIL_HOST_PASSWORD,
    EMAIL_USE_TLS,
    EMAIL_USE_SSL,
) = envemail()
EMAIL_TIMEOUT = envint("EMAIL_TIMEOUT", "10")
DEFAULT_FROM_EMAIL = os.getenv("DEFAULT_FROM_EMAIL", "murmur@localhost")

# Production hardening; `manage.py check --deploy` is clean with DEBUG off.
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", "false" if DEBUG else "true")
# Load balancers probe the app server's own plain-HTTP port (surveys/views/health.py).
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^ready$"]
# Cookies only over HTTPS in production (turn off only for plain-HTTP loopback benchmarks).
SECURE_COOKIES = envbool("SECURE_COOKIES", "false" if DEBUG else "true")
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = LANGUAGE_COOKIE_SECURE = SECURE_COOKIES
# Sessions written to the database and read from the cache (the database when the cache lost them):
# a results page's 304 or poll costs no query for its session.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
SECURE_HSTS_SECONDS = 0 if DEBUG else envint("SECURE_HSTS_SECONDS", "31536000")
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_PRELOAD = not DEBUG
# Behind TLS-terminating proxies: BEHIND_PROXY lists their addresses or networks
# (10.0.0.0/8,127.0.0.1). Only from them are X-Forwarded-Proto and X-Forwarded-For believed; the
# client is the rightmost X-Forwarded-For entry that is not one of them (surveys/responding/ratelimits.py).
# BEHIND_PROXY=true trusts any peer and is refused by `check --deploy`.
TRUSTED_PROXIES = envproxies("BEHIND_PROXY", "false")
BEHIND_PROXY = bool(TRUSTED_PROXIES)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if BEHIND_PROXY else None
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# No inline script or style anywhere, nothing from other origins (surveys/headers.py); in
# development too, so that a violation shows up before production.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
# The page needs no device features; say so, so that no injected or embedded code can ask for them.
PERMISSIONS_POLICY = ", ".join(
    f"{feature}=()"
    for feature in [
        "accelerometer",
        "autoplay",
        "camera",
        "display-capture",
        "geolocation",
        "gyroscope",
        "magnetometer",
        "microphone",
        "midi",
        "payment",
        "usb",
        "browsing-topics",
    ]
)
# A styled, translated page instead of Django's bare one; it never shows the failure's reason.
CSRF_FAILURE_VIEW = "surveys.views.errors.csrf_failure"

# Estimates, charts and rate-limit counters, shared by every worker and server in production: Redis
# when CACHE_URL (or REDIS_URL) is set, else a table on the primary database (surveys/cache.py,
# created by `migrate`). Local memory, one process's own, only in development; `check --deploy`
# refuses it with DEBUG off.
CACHES = {"default": envcache("CACHE_URL", os.getenv("REDIS_URL", "locmem://" if DEBUG else "db://murmur_cache"))}

# Jobs (surveys/jobs/): exports, decoding, mail and scheduled rounds run off the request path. With
# Redis, RQ over it (django-rq; `make serve` starts `manage.py run_jobs`); without, the job table is
# the queue, and under `make run` a thread in runserver works it. "sync" runs a job at once (tests).
_REDIS_URL = os.getenv("REDIS_URL") or (
    os.getenv("CACHE_URL", "") if os.getenv("CACHE_URL", "").startswith(("redis://", "rediss://", "unix://")) else ""
)
JOBS_QUEUE = os.getenv("JOBS_QUEUE", "rq" if _REDIS_URL else "db")
if JOBS_QUEUE not in ("rq", "db", "sync"):
    raise ImproperlyConfigured(f"JOBS_QUEUE must be rq, db or sync, got {JOBS_QUEUE!r}")
if JOBS_QUEUE == "rq" and not _REDIS_URL:
    raise ImproperlyConfigured("JOBS_QUEUE=rq needs REDIS_URL (or a redis:// CACHE_URL).")
JOBS_EMBEDDED = envbool("JOBS_EMBEDDED", "true" if DEBUG else "false")
# A running job whose heartbeat is older than this lost its worker and is queued again.
JOBS_STALE_SECONDS = envint("JOBS_STALE_SECONDS", "120")
RQ_QUEUES = {"murmur": {"URL": _REDIS_URL or "redis://127.0.0.1:6379/0", "DEFAULT_TIMEOUT": 6 * 3600}}
RQ_SHOW_ADMIN_LINK = False
# Finished exports stay downloadable this long, then the hourly sweep deletes their files.
EXPORT_EXPIRY_HOURS = envint("EXPORT_EXPIRY_HOURS", "24")
MEDIA_ROOT = Path(os.getenv("MEDIA_ROOT", BASE_DIR / "media"))
# A live survey's results are recomputed at most once per this many seconds; meanwhile readers get
# the last computed page with its age (surveys/results/snapshots.py). 0: always fresh.
RESULTS_REFRESH_SECONDS = envint("RESULTS_REFRESH_SECONDS", "0" if DEBUG else "5")
# Post-hoc cross-tabs' pair counts of the open hours are recounted at most once per this many
# seconds (surveys/results/pair_counts.py); closed hours are counted once. 0: at every new response.
PAIR_REFRESH_SECONDS = envint("PAIR_REFRESH_SECONDS", "0" if DEBUG else "60")

# Rate limits per client (surveys/responding/ratelimits.py), counted in the cache above: a keyed hash of the
# client's address, kept only for its window. RATE_LIMITS=false turns them all off (benchmarks).
RATE_LIMITS_ENABLED = envbool("RATE_LIMITS", "true")
RATE_LIMITS = {
    # Per client and survey: an office behind one address can still answer together.
    "submit": envrates("RATE_LIMIT_SUBMIT", "30/m,300/h"),
    "signup": envrates("RATE_LIMIT_SIGNUP", "10/h"),
    "public_results": envrates("RATE_LIMIT_PUBLIC_RESULTS", "60/m"),
    # Mail-sending forms: password reset and resending the address check.
    "mail": envrates("RATE_LIMIT_MAIL", "5/h"),
    # Workspace invitations (surveys/teams/members.py), each a mail to an address the inviter typed:
    # per inviter, and per workspace (however many owners it has).
    "invite": envrates("RATE_LIMIT_INVITE", "20/h,50/d"),
    "invite_workspace": envrates("RATE_LIMIT_INVITE_WORKSPACE", "30/h,100/d"),
    # The organizer API (surveys/api/auth.py): requests per token, and wrong tokens per client (like passwords).
    "api": envrates("RATE_LIMIT_API", "120/m,3000/h"),
    "api_auth": envrates("RATE_LIMIT_API_AUTH", "20/15m"),
}
# Login throttling by django-axes, on its database tables (surveys/responding/ratelimits.py): the
# limit-th wrong password in a row for one account *from one client* pauses that pair for the
# window, so a stranger elsewhere cannot lock the owner out.
LOGIN_FAILURES = (envint("LOGIN_FAILURE_LIMIT", "20"), envint("LOGIN_FAILURE_SECONDS", "900"))
# Per account, from every client together: after LOGIN_DELAY_AFTER failures in the window, a client
# the account never logged in from waits 1 s, then 2, 4, ... up to LOGIN_DELAY_MAX seconds after the
# last failure before a password is checked; clients it logged in from within LOGIN_USUAL_DAYS do not.
LOGIN_DELAY = (envint("LOGIN_DELAY_AFTER", "5"), envint("LOGIN_DELAY_MAX", "300"))
LOGIN_USUAL_DAYS = envint("LOGIN_USUAL_DAYS", "90")
# Per client, across every account: after this many wrong passwords in the window the client pauses
# (password spraying: a few passwords tried on many accounts); five times the per-account-and-client limit.
LOGIN_CLIENT_FAILURES = envint("LOGIN_CLIENT_FAILURE_LIMIT", "100")
AXES_ENABLED = RATE_LIMITS_ENABLED
AXES_HANDLER = "surveys.responding.ratelimits.LoginThrottle"
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_FAILURE_LIMIT = LOGIN_FAILURES[0]
AXES_COOLOFF_TIME = timedelta(seconds=LOGIN_FAILURES[1])
AXES_CLIENT_IP_CALLABLE = "surveys.responding.ratelimits.login_client"
AXES_LOCKOUT_CALLABLE = "surveys.responding.ratelimits.login_refused"
# A refused attempt is not counted, so the pause ends one window after the limit-th failure.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_RESET_ON_SUCCESS = True
# axes' log lines name none of these (docs/deployment.md: no address or user agent is logged).
AXES_SENSITIVE_PARAMETERS = ["username", "ip_address", "user_agent"]

# Password-reset mail leaves in a background thread, so that the page answers in the same time for
# known and unknown addresses (surveys/accounts.py); inline in development, where it goes to the console.
MAIL_IN_BACKGROUND = envbool("MAIL_IN_BACKGROUND", "false" if DEBUG else "true")

# Shards of every tally and hourly counter: a submission adds to one at random, so concurrent
# respondents rarely wait on the same row; readers sum them (docs/deployment.md).
TALLY_SHARDS = envint("TALLY_SHARDS", "16")

# How often an open survey's results page asks for new numbers (a cheap 204 when nothing changed).
RESULTS_POLL_SECONDS = envint("RESULTS_POLL_SECONDS", "5")

# Request bodies: a survey submission is small; anything much larger is refused outright.
DATA_UPLOAD_MAX_MEMORY_SIZE = envint("DATA_UPLOAD_MAX_MEMORY_SIZE", str(256 * 1024))

# Logs never carry request bodies, and every line passes surveys.logs.RedactSecrets: no query
# string, share slug or reset/confirmation token (docs/deployment.md: what is logged, how long to keep it).
# Django's own "django" handlers are replaced (its console handler would write unredacted lines,
# and mail_admins would mail request details); runserver's request lines keep their format.
LOG_LEVEL = os.getenv("LOG_LEVEL", "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"redact": {"()": "surveys.logs.RedactSecrets"}},
    "formatters": {
        "django.server": {"()": "django.utils.log.ServerFormatter", "format": "[{server_time}] {message}", "style": "{"}
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "filters": ["redact"]},
        "django.server": {"class": "logging.StreamHandler", "formatter": "django.server", "filters": ["redact"]},
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django": {"handlers": [], "level": LOG_LEVEL, "propagate": True},
        "django.server": {"handlers": ["django.server"], "level": "INFO", "propagate": False},
        # django-axes: failures and pauses (warnings), not every step (info).
        "axes": {"level": "WARNING"},
    },
}
