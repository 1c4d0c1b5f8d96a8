"""Update the Korean catalogs, or (``--check``) fail when they are not complete and current.

One place holds the makemessages options, so that ``make messages`` writes exactly what
``make i18n-check`` expects. ``--check`` changes nothing in the tree: it runs makemessages in a
temporary copy of the sources and fails when

- that would change a ``.po`` file (ignoring the POT-Creation-Date header, which changes on every run),
- any message is untranslated or fuzzy,
- a committed ``.mo`` file does not hold what its ``.po`` file says (compared decompiled, so a
  different msgfmt version cannot make it fail).
"""

from __future__ import annotations

import difflib
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

LANGUAGES = ["ko"]
DOMAINS = ["django", "djangojs"]
#: Folders whose strings are not user-facing (tests, benchmarks, docs) or are generated.
IGNORE = ["staticfiles", "bench", "docs", "tests", "locale", "node_modules"]
#: Without source locations and obsolete entries, a catalog changes only when its messages do.
MAKEMESSAGES_OPTIONS = ["--no-location", "--no-obsolete", *(f"--ignore={pattern}" for pattern in IGNORE)]
#: What a temporary copy of the sources leaves out (makemessages skips dot-folders such as .venv itself).
COPY_IGNORE = shutil.ignore_patterns(".*", "staticfiles", "node_modules", "__pycache__", "*.sqlite3")


class Command(BaseCommand):
    help = "Update the Korean catalogs (makemessages, compilemessages); --check fails if they are not current."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--check", action="store_true", help="change nothing; fail if the catalogs need work")

    def handle(self, *args: Any, check: bool, **options: Any) -> None:
        locale_dir = Path(settings.LOCALE_PATHS[0])
        if not check:
            makemessages(Path(settings.BASE_DIR))
            call_command("compilemessages", locale=LANGUAGES, ignore_patterns=[".*", *IGNORE], verbosity=0)
            for language in LANGUAGES:
                for domain in DOMAINS:
                    self.stdout.write(f"{language} {domain}: {statistics(po_path(locale_dir, language, domain))}")
            return
        problems = []
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "src"
            shutil.copytree(settings.BASE_DIR, copy, ignore=COPY_IGNORE)
            makemessages(copy)
            fresh_locale = copy / locale_dir.relative_to(settings.BASE_DIR)
            for language in LANGUAGES:
                for domain in DOMAINS:
                    po = po_path(locale_dir, language, domain)
                    problems += catalog_changes(po, po_path(fresh_locale, language, domain))
                    problems += translation_problems(po)
                    problems += stale_mo(po, Path(tmp))
                    self.stdout.write(f"{language} {domain}: {statistics(po)}")
        if problems:
            raise CommandError(
                "\n".join([*problems, "Run `make messages`, translate, and commit the .po and .mo files."])
            )
        self.stdout.write("The catalogs are complete and current.")


def po_path(locale_dir: Path, language: str, domain: str) -> Path:
    return locale_dir / language / "LC_MESSAGES" / f"{domain}.po"


def makemessages(source: Path) -> None:
    """makemessages for every language and domain, run in ``source`` (a separate process per domain)."""
    for domain in DOMAINS:
        command = [sys.executable, "manage.py", "makemessages", "--domain", domain, *MAKEMESSAGES_OPTIONS]
        command += [f"--locale={language}" for language in LANGUAGES]
        subprocess.run(command, cwd=source, check=True, capture_output=True, text=True)


def normalized(po: Path) -> list[str]:
    lines = po.read_text(encoding="utf-8").splitlines(keepends=True) if po.exists() else []
    return [line for line in lines if not line.startswith('"POT-Creation-Date:')]


def catalog_changes(committed: Path, fresh: Path) -> list[str]:
    diff = list(difflib.unified_diff(normalized(committed), normalized(fresh), str(committed), "makemessages"))
    if not diff:
        return []
    shown = "".join(diff[:60]) + ("…\n" if len(diff) > 60 else "")
    return [f"{committed} is not what makemessages writes:\n{shown}"]


def statistics(po: Path) -> str:
    """msgfmt's count of translated, fuzzy and untranslated messages, e.g. "230 translated messages."."""
    result = subprocess.run(
        ["msgfmt", "--check-format", "--statistics", "-o", "/dev/null", str(po)], capture_output=True, text=True
    )
    return result.stderr.strip() + (" (msgfmt failed)" if result.returncode else "")


def translation_problems(po: Path) -> list[str]:
    """Untranslated or fuzzy messages (the header counts too: a fuzzy header is ignored by msgfmt)."""
    if not po.exists():
        return [f"{po} is missing."]
    problems = []
    counts = statistics(po)
    if re.search(r"fuzzy|untranslated|failed", counts):
        problems.append(f"{po}: {counts}")
    if any(line.startswith("#,") and "fuzzy" in line for line in po.read_text(encoding="utf-8").splitlines()):
        problems.append(f"{po}: has fuzzy entries (remove the fuzzy flag once the translation is checked).")
    return list(dict.fromkeys(problems))


def stale_mo(po: Path, tmp: Path) -> list[str]:
    """Whether the committed .mo holds exactly the .po's translations (compared decompiled by msgunfmt)."""
    mo = po.with_suffix(".mo")
    if not mo.exists():
        return [f"{mo} is missing: compile it (make messages) and commit it."]
    compiled = tmp / f"{po.stem}.fresh.mo"
    subprocess.run(["msgfmt", "-o", str(compiled), str(po)], check=True, capture_output=True)
    if decompiled(mo) != decompiled(compiled):
        return [f"{mo} is stale: it does not match {po.name} (make messages, then commit the .mo)."]
    return []


def decompiled(mo: Path) -> str:
    return subprocess.run(["msgunfmt", str(mo)], check=True, capture_output=True, text=True).stdout
