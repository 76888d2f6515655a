"""`kubectl logs` (with -f, --previous, --tail, --since, --timestamps, -c) of simulated pods,
and exec, attach, cp, port-forward, run -it and debug refused in one clear line, through real
kubectl 1.33 (WebSocket first, then SPDY) and 1.27 (SPDY), with no upgrade noise in the
server's log."""

from __future__ import annotations

import subprocess
import time

import pytest

from .conftest import ClusterProcess, make_kubectl, wait_for

pytestmark = [pytest.mark.kubectl, pytest.mark.slow]

REFUSAL = 'pod "{pod}" is simulated by pyhpa and runs no processes: '


@pytest.fixture(scope="module")
def proc(tmp_path_factory):
    p = ClusterProcess(tmp_path_factory.mktemp("cluster")).start()
    yield p
    p.stop()


@pytest.fixture(scope="module", params=[33, 27])
def k(request, proc, tmp_path_factory):
    run = make_kubectl(request.param, proc, tmp_path_factory.mktemp("kubehome"))
    ns = f"logs-{request.param}"
    run("create", "namespace", ns)

    def in_ns(*args: str, **kw):
        return run("-n", ns, *args, **kw)
    in_ns.base = run  # type: ignore[attr-defined]
    in_ns.ns = ns  # type: ignore[attr-defined]
    in_ns.kubeconfig = proc.kubeconfig  # type: ignore[attr-defined]
    return in_ns


def running(k, pod: str) -> None:
    k("run", pod, "--image=nginx")
    wait_for(lambda: "1/1" in k("get", "pod", pod).stdout, what=f"{pod} Ready")


def test_logs_show_the_containers_life_with_the_usual_flags(k):
    running(k, "web")
    out = k("logs", "web").stdout.splitlines()
    assert out == ["started: image nginx (a simulated container: no process runs, its usage "
                   "is modelled)", "ready: serving"]
    assert k("logs", "web", "--tail=1").stdout == "ready: serving\n"
    assert k("logs", "web", "-c", "web", "--since=1h").stdout.splitlines() == out
    stamped = k("logs", "web", "--timestamps").stdout.splitlines()
    assert [line.split(" ", 1)[1] for line in stamped] == out
    assert all(line[:4].isdigit() and line.split(" ", 1)[0].endswith("Z") for line in stamped)
    previous = k("logs", "web", "--previous", check=False)
    assert previous.returncode == 1
    assert previous.stderr.strip() == ('Error from server (BadRequest): previous terminated '
                                       'container "web" in pod "web" not found')
    # -f follows until the pod is gone: its stop is the last line
    follow = subprocess.Popen([k.base.binary, "--kubeconfig", str(k.kubeconfig), "-n", k.ns,
                               "logs", "-f", "web"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=k.base.env)
    try:
        time.sleep(1.5)
        k("delete", "pod", "web", "--wait=false")
        stdout, stderr = follow.communicate(timeout=30)
    finally:
        follow.kill()
    assert follow.returncode == 0, stderr
    assert stdout.splitlines()[:2] == out
    assert stdout.splitlines()[-1] in ("received SIGTERM: shutting down",
                                       "terminated (exit code 0)")


@pytest.mark.parametrize("args, why", [
    (["exec", "{pod}", "--", "ls"], "there is no process to exec into (kubectl exec and cp need one)"),
    (["attach", "{pod}"], "there is no process to attach to"),
    (["cp", "{pod}:/etc/hosts", "{tmp}/hosts"], "there is no process to exec into (kubectl exec and cp need one)"),
    (["port-forward", "{pod}", "18081:80"], "there is no port to forward to"),
    (["debug", "{pod}", "--image=busybox"], "no ephemeral container can be started (kubectl debug needs one)"),
])
def test_process_commands_are_refused_in_one_clear_line(k, args, why, tmp_path):
    if k("get", "pod", "idle", check=False).returncode != 0:
        running(k, "idle")
    out = k(*[a.format(pod="idle", tmp=tmp_path) for a in args], check=False)
    assert out.returncode == 1
    errors = [line for line in out.stderr.splitlines()
              if REFUSAL.format(pod="idle") in line]
    assert len(errors) == 1 and errors[0].endswith(why), out.stderr
    assert "NotFound" not in out.stderr and "could not find" not in out.stderr


def test_the_server_log_has_no_upgrade_warnings(tmp_path):
    proc = ClusterProcess(tmp_path / "cluster").start()
    try:
        k = make_kubectl(33, proc, tmp_path / "home")
        running(k, "quiet")
        for args in (["exec", "quiet", "--", "true"], ["attach", "quiet"],
                     ["port-forward", "quiet", "18083:80"], ["logs", "quiet"]):
            k(*args, check=False)
    finally:
        popen = proc.proc
        proc.stop()
    assert popen is not None and popen.stdout is not None
    log = popen.stdout.read()
    assert "WARNING" not in log and "upgrade" not in log.lower(), log
