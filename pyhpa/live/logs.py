"""Structured logs: one JSON object per line (`--logging-format=json`, as kube components offer) or
klog-like text. Fields passed with `extra=` appear as keys."""

from __future__ import annotations

import json
import logging
import sys
from datetime import datetime, timezone

_STD = set(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = {
            "ts": datetime.fromtimestamp(record.created, tz=timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for k, v in vars(record).items():
            if k not in _STD and not k.startswith("_"):
                out[k] = v if isinstance(v, (str, int, float, bool, type(None))) else str(v)
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, separators=(",", ":"))


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        ts = datetime.fromtimestamp(record.created, tz=timezone.utc).strftime("%H:%M:%S.%f")[:-3]
        extras = " ".join(f'{k}="{v}"' for k, v in vars(record).items() if k not in _STD and not k.startswith("_"))
        line = f"{record.levelname[0]}{ts} {record.name}] {record.getMessage()}" + (f" {extras}" if extras else "")
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def setup_logging(fmt: str = "text", level: str | int = "INFO", stream=None) -> None:
    if fmt not in ("text", "json"):
        raise ValueError(f"--logging-format: must be text or json, got {fmt!r}")
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger("pyhpa")
    root.handlers[:] = [handler]
    root.setLevel(level if isinstance(level, int) else level.upper())
    root.propagate = False
