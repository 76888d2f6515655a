"""Time and size bounds on the server's connections, the ones Go's ``http.Server`` gives the
real API server and uvicorn leaves out.

Why a protocol of our own: uvicorn closes a keep-alive connection that stays idle after a
response, but not one that never sends a request, nor one that sends its headers a byte at a
time; 2,000 idle TCP connections once stayed open for good. The numbers are upstream's secure
serving settings: ``IdleTimeout`` 90 s, ``ReadHeaderTimeout`` 32 s, ``MaxHeaderBytes`` 1 MiB.
A request body that stops arriving is bounded by :func:`body_read_timeout` in the app.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

IDLE_TIMEOUT = 90.0  # a connection with no request in flight
HEADER_TIMEOUT = 32.0  # from a request's first byte to the end of its headers
BODY_TIMEOUT = 60.0  # between two parts of a request body
MAX_HEADER_BYTES = 1024 * 1024
HELD_BYTES = 64 * 1024  # a body part joined with its head at most (JoinedWrites)


def body_read_timeout() -> float:
    """Seconds a handler waits for the next part of a body before giving up on the request."""
    return BODY_TIMEOUT


class JoinedWrites:
    """A connection's transport that sends a response's head with the first part of its body.

    Why: uvicorn writes a response's status line and headers, then its body, each at once;
    over TLS each write became a record, an encryption and a send of its own, about a sixth of
    the server's CPU for a GET. The first write after a request's headers (:meth:`hold_next`),
    the response's head, is held and leaves with the next write as one record and one send;
    when no next write comes in this turn of the event loop (a watch waiting for its first
    event), at the end of it, and before the transport closes. Every other write leaves at
    once, without waiting for the turn to end: a watch event is on its way as soon as it is
    written (the watch joins the events it has ready itself). Everything else is the wrapped
    transport's.
    """

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._hold = False
        self._held: bytes | None = None

    def hold_next(self) -> None:
        """Hold the next write (a response's head) for the one after it."""
        self._hold = True

    def write(self, data: bytes) -> None:
        held = self._held
        if self._hold:
            self._hold = False
            if held is None:
                self._held = data
                self._loop.call_soon(self.flush)
                return
        if held is not None:
            self._held = None
            if len(data) <= HELD_BYTES:  # one TLS record: one encryption
                self._transport.write(held + data)
            else:
                self._transport.writelines([held, data])
        else:
            self._transport.write(data)

    def flush(self) -> None:
        held = self._held
        if held is not None:
            self._held = None
            if not self._transport.is_closing():
                self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class BoundedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with an idle timeout from the first byte on, a deadline for
    a request's headers and a cap on their size (a 431 answer past it); a response's head
    leaves with its body (:class:`JoinedWrites`)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.transport = JoinedWrites(transport, self.loop)  # type: ignore[assignment]
        self._header_bytes = 0
        self._awaiting_headers = True
        self._head_started = False  # a request's first byte came, its headers have not ended
        self._header_deadline: asyncio.TimerHandle | None = None
        self.timeout_keep_alive_task = self.loop.call_later(IDLE_TIMEOUT,
                                                            self.timeout_keep_alive_handler)

    def data_received(self, data: bytes) -> None:
        if self._awaiting_headers:
            self._header_bytes += len(data)
            if self._header_bytes > MAX_HEADER_BYTES:
                self._refuse_headers()
                return
        super().data_received(data)
        # The deadline runs from a request's first byte; a request whose headers came whole
        # in this read (nearly all) never needs the timer.
        if self._head_started and self._header_deadline is None \
                and not self.transport.is_closing():
            self._header_deadline = self.loop.call_later(HEADER_TIMEOUT, self._headers_late)

    def on_message_begin(self) -> None:
        self._head_started = True
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self.transport.hold_next()  # type: ignore[attr-defined]  # the response's head
        self._awaiting_headers = False
        self._head_started = False
        self._header_bytes = 0
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._awaiting_headers = True  # the next request on this connection

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None
        super().connection_lost(exc)

    def _unsupported_upgrade_warning(self) -> None:
        """Say nothing: kubectl exec, attach and port-forward ask for a WebSocket (1.30+) or
        SPDY upgrade, and the app answers them as plain requests, with the Status that says
        why (see pod_io.py); uvicorn's two warnings per request would only fill the log."""

    def _headers_late(self) -> None:
        self._header_deadline = None
        if not self.transport.is_closing():
            self.transport.close()

    def _refuse_headers(self) -> None:
        self._awaiting_headers = False
        self._head_started = False
        if not self.transport.is_closing():
            body = b"431 Request Header Fields Too Large"
            self.transport.write(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
                                 b"content-type: text/plain; charset=utf-8\r\nconnection: close"
                                 b"\r\ncontent-length: " + str(len(body)).encode()
                                 + b"\r\n\r\n" + body)
            self.transport.close()


def uvicorn_options() -> dict[str, Any]:
    """The uvicorn settings these bounds need (the protocol and its idle timeout), and no
    ``X-Forwarded-For`` reading: nothing proxies this server, a client's address is its peer's
    (the watch limit per client counts by it), and uvicorn's middleware for it wrapped every
    request."""
    return {"http": BoundedHttpProtocol, "timeout_keep_alive": IDLE_TIMEOUT,
            "proxy_headers": False}
