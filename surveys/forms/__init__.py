"""Forms validate; views and actions assign.

One module per thing a form edits: accounts (sign-up), survey (its settings), invitations, question
(a question's text, options and randomization), candidates (a short answer's), matrix, pair.
"""

from __future__ import annotations

import operator

from django.utils.functional import lazy

#: ``_("...%(x)s") % values`` on a lazy string translates at import time, in the default language;
#: this defers the whole interpolation to when the text is shown.
interpolate_lazy = lazy(operator.mod, str)
