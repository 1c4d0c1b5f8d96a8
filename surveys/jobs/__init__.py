"""Work off the request path: exports, decoding, estimates, mail and scheduled rounds.

A :class:`~surveys.jobs.records.Job` row is the truth about a piece of work (its task, parameters,
progress, result, file and status); a transport only says *when* a worker runs it
(:mod:`surveys.jobs.queue`): RQ over Redis when Murmur has Redis, else the database itself (a
worker polls the job table; under ``make run`` a thread inside runserver). ``docs/deployment.md``
says how to run the workers and why jobs are idempotent.

This package's ``__init__`` imports nothing, so that ``surveys.models`` can import the records.
"""
