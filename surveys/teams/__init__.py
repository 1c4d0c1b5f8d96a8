"""Workspaces shared by several organizers, their roles and audit log, and OpenID Connect sign-on.

Models live in :mod:`surveys.teams.models` (imported from ``surveys/models.py``); who may do what is
decided only in :mod:`surveys.access`.
"""
