"""The one way pyhpa's HTTP servers (the embedded API server, the controller's metrics and health
endpoint) open their listening socket.

Why bind it ourselves rather than let uvicorn do it: a busy or forbidden address must be one clear
error at start-up (the caller names its flag), not uvicorn's log line and an exit from inside a
task; and the socket gets TCP_NODELAY (asyncio sets it only on sockets created with proto
IPPROTO_TCP; without it a response written as headers + body waits ~40 ms for the client's
delayed ACK; accepted connections inherit the option from the listener).
"""

from __future__ import annotations

import socket


class ListenError(OSError):
    """The address cannot be listened on (in use, not ours, not allowed); the message says
    ``cannot listen on HOST:PORT: reason``."""


def listening_socket(host: str, port: int, backlog: int = 128) -> socket.socket:
    """A non-blocking socket listening on ``host:port`` (an IPv6 host when it has a colon)."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError as exc:
        sock.close()
        shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        raise ListenError(exc.errno, f"cannot listen on {shown}: {exc.strerror or exc}") from None
    sock.setblocking(False)
    return sock
