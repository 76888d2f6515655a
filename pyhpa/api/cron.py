"""Cron schedules as a CronJob's ``spec.schedule`` spells them (github.com/robfig/cron/v3's
standard parser, which kube-controller-manager uses): five fields (minute, hour, day of month,
month, day of week) with ``*``, ``?``, lists, ranges, steps and JAN-DEC/SUN-SAT names, or a
descriptor (``@yearly``, ``@annually``, ``@monthly``, ``@weekly``, ``@daily``, ``@midnight``,
``@hourly``, ``@every 5m``).

Why here: the API server validates schedules and the simulated CronJob controller runs them;
both read them the same way. Pure: times are passed in.
"""

from __future__ import annotations

from types import MappingProxyType

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo

from pyhpa.api.timefmt import parse_duration


class CronError(ValueError):
    """A schedule that cannot be parsed; the message is robfig/cron's."""


_BOUNDS = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 6))
_NAMES = ({}, {}, {},
          {m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul",
                                           "aug", "sep", "oct", "nov", "dec"))},
          {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))})
_DESCRIPTORS = MappingProxyType({"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
                "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
                "@hourly": "0 * * * *"})


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule: the allowed values of each field, or a fixed interval."""

    fields: tuple[frozenset[int], ...] = ()
    dom_star: bool = False
    dow_star: bool = False
    every: float | None = None

    def next_after(self, after: datetime, tz: tzinfo = timezone.utc) -> datetime:
        """The first activation strictly after ``after`` (an aware datetime), in UTC."""
        if self.every is not None:
            step = max(self.every, 1.0)
            return (after + timedelta(seconds=step)).replace(microsecond=0)
        t = after.astimezone(tz).replace(second=0, microsecond=0, tzinfo=None) + \
            timedelta(minutes=1)
        minutes, hours, _, months, _ = self.fields
        limit = t + timedelta(days=366 * 5)
        while t < limit:
            if t.month not in months:
                t = (t.replace(day=1, hour=0, minute=0) + timedelta(days=32)).replace(day=1)
                continue
            if not self._day_matches(t):
                t = t.replace(hour=0, minute=0) + timedelta(days=1)
                continue
            if t.hour not in hours:
                t = t.replace(minute=0) + timedelta(hours=1)
                continue
            if t.minute not in minutes:
                t += timedelta(minutes=1)
                continue
            return t.replace(tzinfo=tz).astimezone(timezone.utc)
        raise CronError("no activation within five years")

    def _day_matches(self, t: datetime) -> bool:
        dom = t.day in self.fields[2]
        dow = (t.isoweekday() % 7) in self.fields[4]
        if self.dom_star or self.dow_star:
            return dom and dow
        return dom or dow


def _value(text: str, i: int) -> int:
    low = text.lower()
    if low in _NAMES[i]:
        return _NAMES[i][low]
    if not text.isdigit():
        raise CronError(f"failed to parse int from {text}: strconv.Atoi: parsing "
                        f'"{text}": invalid syntax')
    return int(text)


def _field(text: str, i: int) -> frozenset[int]:
    lo_b, hi_b = _BOUNDS[i]
    out: set[int] = set()
    for part in text.split(","):
        rng, _, step_text = part.partition("/")
        step = 1
        if step_text:
            step = _value(step_text, i)
            if step == 0:
                raise CronError(f"step of range should be a positive number: {part}")
        if rng in ("*", "?"):
            lo, hi = lo_b, hi_b
        else:
            a, dash, b = rng.partition("-")
            lo = _value(a, i)
            hi = _value(b, i) if dash else (hi_b if step_text else lo)
        if lo < lo_b:
            raise CronError(f"beginning of range ({lo}) below minimum ({lo_b}): {part}")
        if hi > hi_b:
            raise CronError(f"end of range ({hi}) above maximum ({hi_b}): {part}")
        if lo > hi:
            raise CronError(f"beginning of range ({lo}) beyond end of range ({hi}): {part}")
        out.update(range(lo, hi + 1, step))
    return frozenset(out)


def parse(spec: str) -> Schedule:
    """A schedule from its text, or :class:`CronError` with robfig/cron's message."""
    text = spec.strip()
    if not text:
        raise CronError("empty spec string")
    if text.startswith("@every "):
        try:
            seconds = parse_duration(text[len("@every "):].strip())
        except Exception as exc:  # noqa: BLE001 - the duration's own message
            raise CronError(f"failed to parse duration {text}: {exc}") from None
        if seconds <= 0:
            raise CronError(f"failed to parse duration {text}")
        return Schedule(every=seconds)
    if text.startswith("@"):
        if text not in _DESCRIPTORS:
            raise CronError(f"unrecognized descriptor: {text}")
        text = _DESCRIPTORS[text]
    parts = text.split()
    if len(parts) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(parts)}: {text}")
    fields = tuple(_field(p, i) for i, p in enumerate(parts))
    return Schedule(fields, dom_star=parts[2] in ("*", "?"), dow_star=parts[4] in ("*", "?"))
