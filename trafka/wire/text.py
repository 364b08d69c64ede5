"""Text that came from a client, made safe to print.

Client ids, user names, topic names, software names: any of them may hold NUL, ESC, BEL or other
control characters, which written raw to a log file or a terminal let an unauthenticated client
inject terminal escapes into whoever tails the log. `printable` shows every control character
(C0, DEL, C1) and a lone surrogate as a backslash escape and leaves all other text as it is.
`SafeLogRecords` does the same to every finished log message of trafka's loggers, so a log line
cannot carry a client's control bytes whichever argument brought them.
"""

from __future__ import annotations

import logging
import re

_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(value):
    """`value` (str, bytes or anything else) as a one-line string without control characters;
    None stays None."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        value = bytes(value).decode("utf-8", "surrogateescape")
    elif not isinstance(value, str):
        value = str(value)
    return _UNSAFE.sub(_escape, value)


class SafeLogRecords(logging.Filter):
    """Escapes control characters in the formatted message (the traceback, added by the
    formatter, keeps its lines)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if _UNSAFE.search(message):
            record.msg, record.args = _UNSAFE.sub(_escape, message), ()
        return True


_FILTER = SafeLogRecords()


def guard_loggers(prefix: str = "trafka") -> None:
    """Attach the filter to every logger named `prefix` or below it (a logger's filters do not
    apply to its children, so each gets it; loggers made later need another call)."""
    manager = logging.Logger.manager
    for name in [prefix, *(n for n in list(manager.loggerDict) if n.startswith(prefix + "."))]:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


__all__ = ["SafeLogRecords", "guard_loggers", "printable"]
