"""`INDX_PDF_PASSWORDS`: the passwords to try on encrypted PDFs, parsed by one rule for the
settings (`Settings.from_env`, which hands them to the reader's config) and for the PDF
reader and chunker (which read the environment themselves).

The value is a JSON array of strings (it starts with `[`), or else one password per line
(empty lines skipped). A value that starts with `[` but is not such an array is refused with
`PasswordsError`, whose one-line message names the variable, rather than dropped, so a
mistyped list never silently leaves encrypted documents unread.
"""

import json

PASSWORDS_ENV = "INDX_PDF_PASSWORDS"


class PasswordsError(ValueError):
    """`INDX_PDF_PASSWORDS` cannot be read (the message says why): a usage error."""


def parse_passwords(raw: str) -> tuple[str, ...]:
    """The passwords `raw` lists, in order (see the module's rule)."""
    if raw.strip().startswith("["):
        try:
            listed = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise PasswordsError(f"{PASSWORDS_ENV} starts with '[' but is not a JSON list ({exc.msg} at "
                                 f"character {exc.pos}); give a JSON list of strings or one password a line") from None
        if not isinstance(listed, list) or not all(isinstance(p, str) for p in listed):
            raise PasswordsError(f"{PASSWORDS_ENV} must be a JSON list of strings (or one password a line)")
        return tuple(listed)
    return tuple(line for line in raw.splitlines() if line)
