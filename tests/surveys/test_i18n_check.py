"""The catalog check behind `make i18n-check`: untranslated, fuzzy and stale catalogs fail it.

(The full check, which runs makemessages, takes seconds and runs in CI as `make i18n-check`.)
"""

from __future__ import annotations

import subprocess

from surveys.management.commands.i18n import catalog_changes, stale_mo, translation_problems

HEADER = """msgid ""
msgstr ""
"POT-Creation-Date: {date}\\n"
"Content-Type: text/plain; charset=UTF-8\\n"
"Language: ko\\n"
"Plural-Forms: nplurals=1; plural=0;\\n"

"""


def write_po(path, entries, date="2026-01-01 00:00+0000"):
    path.write_text(HEADER.format(date=date) + entries, encoding="utf-8")
    return path


def test_a_complete_catalog_passes(tmp_path):
    po = write_po(tmp_path / "django.po", 'msgid "Log in"\nmsgstr "로그인"\n')
    assert translation_problems(po) == []


def test_an_untranslated_message_fails(tmp_path):
    po = write_po(tmp_path / "django.po", 'msgid "Log in"\nmsgstr "로그인"\n\nmsgid "Log out"\nmsgstr ""\n')
    [problem] = translation_problems(po)
    assert "1 untranslated message" in problem


def test_a_fuzzy_message_fails(tmp_path):
    po = write_po(tmp_path / "django.po", '#, fuzzy\nmsgid "Log out"\nmsgstr "로그인"\n')
    assert any("fuzzy" in problem for problem in translation_problems(po))


def test_only_the_creation_date_may_differ(tmp_path):
    entries = 'msgid "Log in"\nmsgstr "로그인"\n'
    committed = write_po(tmp_path / "committed.po", entries)
    assert catalog_changes(committed, write_po(tmp_path / "later.po", entries, date="2027-05-05 05:05+0000")) == []
    changed = write_po(tmp_path / "changed.po", entries + '\nmsgid "Log out"\nmsgstr ""\n')
    [problem] = catalog_changes(committed, changed)
    assert '+msgid "Log out"' in problem


def test_a_stale_mo_fails_and_a_fresh_one_passes(tmp_path):
    po = write_po(tmp_path / "django.po", 'msgid "Log in"\nmsgstr "로그인"\n')
    subprocess.run(["msgfmt", "-o", str(tmp_path / "django.mo"), str(po)], check=True)
    assert stale_mo(po, tmp_path) == []
    write_po(po, 'msgid "Log in"\nmsgstr "로그인하기"\n')
    [problem] = stale_mo(po, tmp_path)
    assert "stale" in problem


#: The names makemessages' xgettext looks for in Python (django.core.management.commands.makemessages).
EXTRACTED = {"_", "gettext", "gettext_lazy", "gettext_noop", "ngettext", "ngettext_lazy", "pgettext", "pgettext_lazy"}
EXTRACTED |= {"npgettext", "npgettext_lazy"}


def test_translation_functions_are_imported_under_names_makemessages_extracts():
    """A string marked through another name (``gettext_lazy as _lazy``) is never extracted, so never translated."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    hidden = []
    for path in [*(root / "surveys").rglob("*.py"), *(root / "config").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module == "django.utils.translation":
                for alias in node.names:
                    if "gettext" in alias.name and (alias.asname or alias.name) not in EXTRACTED:
                        hidden.append(f"{path.relative_to(root)}: {alias.name} as {alias.asname}")
    assert hidden == []
