"""A store and a simulation driven by a settable clock, optionally served over HTTP (ASGI, no
sockets): what the tests of the simulated controllers and of the exporters build each time."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from starlette.testclient import TestClient

from pyhpa.cluster.apiserver.server import APIServer
from pyhpa.cluster.apiserver.storage import Store
from pyhpa.cluster.controllers.simulation import Simulation
from tests.clock import Clock


@dataclass
class SimulatedCluster:
    store: Store
    sim: Simulation
    clock: Clock
    start: float
    client: TestClient | None

    def at(self, t: float) -> None:
        """Move the clock to ``t`` seconds after the start and let the controllers settle."""
        self.clock.t = self.start + t
        self.sim.settle()


@contextmanager
def simulated(tmp_path: Path, start: float, *serve: Callable[[APIServer, Simulation], None],
              token: str | None = None, **options: Any) -> Iterator[SimulatedCluster]:
    """A simulation (``options`` for :class:`Simulation`) with its node, its clock at ``start``;
    with ``serve`` (e.g. ``metrics_server.install``) also an API server they install into and a
    client of it."""
    store = Store(tmp_path / "store.sqlite")
    clock = Clock(start)
    server = APIServer(store, token=token) if serve else None
    sim = Simulation(store, clock, **options)
    sim.ensure_node()
    client = None
    if server is not None:
        for install in serve:
            install(server, sim)
        client = TestClient(server)
    try:
        yield SimulatedCluster(store, sim, clock, start, client)
    finally:
        if client is not None:
            client.close()
        store.close()
