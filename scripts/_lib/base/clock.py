"""Timestamps: ISO 8601 UTC strings as the data model writes them.

`datetime` and `re` are imported only where a value is not already in the canonical form
(`YYYY-MM-DDTHH:MM:SSZ`): every memory file read and every write goes through here.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as _dt

_ISO_PATTERN = r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}:?\d{2})?$"


def _format(year: int, month: int, day: int, hour: int, minute: int, second: int) -> str:
    """`YYYY-MM-DDTHH:MM:SSZ` (four digits of year even before 1000, which strftime drops)."""
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}Z"


def now() -> _dt.datetime:
    """The current time, UTC, whole seconds."""
    import datetime as _dt

    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)


def now_iso() -> str:
    """The current time as `YYYY-MM-DDTHH:MM:SSZ`."""
    return _format(*time.gmtime()[:6])


def to_iso(moment: _dt.datetime | _dt.date) -> str:
    """Format a datetime (naive means UTC) or date as an ISO 8601 UTC string."""
    import datetime as _dt

    if not isinstance(moment, _dt.datetime):
        moment = _dt.datetime(moment.year, moment.month, moment.day, tzinfo=_dt.timezone.utc)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.timezone.utc)
    moment = moment.astimezone(_dt.timezone.utc)
    text = _format(moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second)[:-1]
    if moment.microsecond:
        text += f".{moment.microsecond:06d}".rstrip("0")
    return text + "Z"


EARLIEST, LATEST = -62135596800, 253402300799  # 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z


def from_epoch(seconds: float) -> str:
    """An epoch time (e.g. a file's mtime) as an ISO string, whole seconds; a time past what the
    data model can write (a file system allows mtimes beyond year 9999) is taken as its last second."""
    return _format(*time.gmtime(min(max(int(seconds), EARLIEST), LATEST))[:6])


def parse(value: object) -> _dt.datetime | None:
    """Parse an ISO 8601 timestamp (string, date or datetime); None when it is not one.

    Naive values are taken as UTC. Works on Python 3.10, whose `fromisoformat`
    does not accept a `Z` suffix.
    """
    import datetime as _dt

    if isinstance(value, str) and is_canonical(value):
        return _dt.datetime.fromisoformat(value[:-1]).replace(tzinfo=_dt.timezone.utc)
    import re

    if isinstance(value, _dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=_dt.timezone.utc)
    if isinstance(value, _dt.date):
        return _dt.datetime(value.year, value.month, value.day, tzinfo=_dt.timezone.utc)
    if not isinstance(value, str) or not re.match(_ISO_PATTERN, value.strip()):
        return None
    text = value.strip().replace(" ", "T", 1)
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    elif re.search(r"[+-]\d{4}$", text):
        text = text[:-2] + ":" + text[-2:]
    fraction = re.search(r"\.(\d+)", text)
    if fraction and len(fraction.group(1)) != 6:  # 3.10 wants exactly 3 or 6 digits
        digits = (fraction.group(1) + "000000")[:6]
        text = text[: fraction.start(1)] + digits + text[fraction.end(1):]
    try:
        moment = _dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=_dt.timezone.utc)


def is_canonical(value: str) -> bool:
    """`value` is a valid `YYYY-MM-DDTHH:MM:SSZ` (a day past the 28th is left to `parse`). Compared
    as text, field by field: health asks this of every memory's timestamps."""
    if (len(value) != 20 or value[19] != "Z" or value[10] != "T" or value[4] != "-" or value[7] != "-"
            or value[13] != ":" or value[16] != ":"):
        return False
    digits = value[0:4] + value[5:7] + value[8:10] + value[11:13] + value[14:16] + value[17:19]
    return (digits.isascii() and digits.isdigit() and digits[:4] != "0000" and "01" <= value[5:7] <= "12"
            and "01" <= value[8:10] <= "28" and value[11:13] < "24" and value[14:16] < "60" and value[17:19] < "60")


def normalise(value: object) -> str | None:
    """The canonical ISO string of a timestamp value, or None if it is not one."""
    if isinstance(value, str) and is_canonical(value):
        return value
    moment = parse(value)
    return to_iso(moment) if moment else None


def parse_since(text: str) -> _dt.datetime | None:
    """Parse a `--since` value: an ISO date/time, or a relative age like `7d`, `12h`, `2w`."""
    import datetime as _dt
    import re

    match = re.fullmatch(r"\s*(\d+)\s*([mhdw])\s*", text)
    if match:
        amount, unit = int(match.group(1)), match.group(2)
        try:
            delta = {"m": _dt.timedelta(minutes=amount), "h": _dt.timedelta(hours=amount),
                     "d": _dt.timedelta(days=amount), "w": _dt.timedelta(weeks=amount)}[unit]
            return now() - delta
        except OverflowError:  # an age beyond the calendar: since the beginning, everything
            return _dt.datetime.min.replace(tzinfo=_dt.timezone.utc)
    return parse(text)


def age(timestamp: str, at: _dt.datetime | None = None) -> str:
    """How long before `at` (default: now) a timestamp was, in words: `today`, `yesterday`,
    `5 days ago`, `3 months ago`..."""
    moment = parse(timestamp)
    if moment is None:
        return "age unknown"
    days = ((at or now()) - moment).days
    if days <= 0:
        return "today"
    if days == 1:
        return "yesterday"
    if days < 60:
        return f"{days} days ago"
    if days < 730:
        return f"{days // 30} months ago"
    return f"{days // 365} years ago"
