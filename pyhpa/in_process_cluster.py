"""The embedded cluster started inside this process, for `pyhpa run --embedded` and `pyhpa demo`.

It lives above both :mod:`pyhpa.cluster` and :mod:`pyhpa.live`: the live controller only ever
talks to it over HTTP through its kubeconfig, as to any other cluster.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from pyhpa.api.versions import VersionProfile
from pyhpa.cluster.embedded import EmbeddedCluster


class InProcessCluster:
    """The embedded cluster run inside this process.

    Without a data dir it lives in a fresh temporary directory, removed by `stop()`: nothing is
    left behind in /tmp once the command ends.
    """

    def __init__(self, data_dir: str | None, prefix: str = "pyhpa-cluster-", **kwargs: Any) -> None:
        self.temporary = None if data_dir else Path(tempfile.mkdtemp(prefix=prefix))
        self.cluster = EmbeddedCluster(Path(data_dir) if data_dir else self.temporary, port=0, **kwargs)

    @property
    def kubeconfig(self) -> str:
        return str(self.cluster.kubeconfig_path)

    async def start(self) -> "InProcessCluster":
        try:
            await self.cluster.start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def stop(self) -> None:
        try:
            await self.cluster.stop()
        finally:
            if self.temporary is not None:
                shutil.rmtree(self.temporary, ignore_errors=True)


async def start_in_process_cluster(data_dir: str | None, profile: VersionProfile | None = None) -> InProcessCluster:
    """What `pyhpa run` calls when it controls a cluster of its own (see :mod:`pyhpa.live.runner`):
    the server behaves as the controller's `profile` (its release and gates)."""
    return await InProcessCluster(data_dir, profile=profile).start()
