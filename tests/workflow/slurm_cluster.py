"""A real single-node SLURM cluster (munged, slurmctld, slurmd from Debian's slurm-wlm and
munge) for the workflow tests: started on demand, stopped afterwards.

Facts (DEVELOPERS.md, "SLURM here"): the config must be at /etc/slurm/slurm.conf (where the
client commands look); there are no cgroups in this container, so processes are tracked with
proctrack/linuxproc and tasks are not bound (task/none); memory is enforced by slurmstepd
polling each step's RSS every second (jobacct_gather/linux with OverMemoryKill), which kills
the step with OUT_OF_MEMORY once it is over its --mem; there is no slurmdbd (accounting off),
so job states come from squeue, kept for MinJobAge seconds after a job ends. The node also
declares one GPU (a gres of type gpu backed by /dev/null, gres.conf beside slurm.conf) in a second
partition, so a job asking `--gpus=1` is scheduled there: routing by GPU is tested for real,
though no job here uses a GPU."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

CONF = Path("/etc/slurm/slurm.conf")
GRES = CONF.parent / "gres.conf"
BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol")
PARTITION = "debug"
GPU_PARTITION = "gpu"  # the same node, declaring one GPU: a job asking gpu=1 can be placed there


def missing() -> str | None:
    """Why this machine cannot run the cluster (None when it can)."""
    absent = [b for b in BINARIES if not shutil.which(b) and not os.path.exists(f"/usr/sbin/{b}")]
    if absent:
        return f"no {', '.join(absent)}: install slurm-wlm and munge (apt-get install slurm-wlm munge; .ci/run does)"
    if os.geteuid() != 0:
        return "slurmd must run as root here (it starts job steps as the submitting user)"
    return None


def _sbin(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


def slurm_conf(state: Path, memory_mb: int, cpus: int) -> str:
    host = socket.gethostname().split(".")[0]
    return f"""# written by tests/workflow/slurm_cluster.py
ClusterName=aicd-test
SlurmctldHost={host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={state}/munge/munge.socket
CredType=cred/munge
StateSaveLocation={state}/ctld
SlurmdSpoolDir={state}/d
SlurmctldPidFile={state}/slurmctld.pid
SlurmdPidFile={state}/slurmd.pid
SlurmctldLogFile={state}/slurmctld.log
SlurmdLogFile={state}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
JobAcctGatherParams=OverMemoryKill
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=3600
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
GresTypes=gpu
NodeName={host} CPUs={cpus} RealMemory={memory_mb} Gres=gpu:1 State=UNKNOWN
PartitionName={PARTITION} Nodes={host} Default=YES MaxTime=INFINITE State=UP
PartitionName={GPU_PARTITION} Nodes={host} MaxTime=INFINITE State=UP
"""


def gres_conf() -> str:
    host = socket.gethostname().split(".")[0]
    return f"# written by tests/workflow/slurm_cluster.py\nAutoDetect=off\nNodeName={host} Name=gpu Count=1 File=/dev/null\n"


class Cluster:
    def __init__(self, state: Path, memory_mb: int = 8000, cpus: int | None = None):
        self.state = Path(state)
        self.memory_mb = memory_mb
        self.cpus = cpus or os.cpu_count() or 1
        self._saved_conf: str | None = None
        self._saved_gres: str | None = None
        self._munged_pid: Path = self.state / "munged.pid"

    def _run(self, *cmd: str, timeout: int = 30) -> subprocess.CompletedProcess:
        return subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout)

    def start(self) -> None:
        for sub in ("ctld", "d", "munge"):
            (self.state / sub).mkdir(parents=True, exist_ok=True)
        if CONF.exists():
            self._saved_conf = CONF.read_text()
        CONF.parent.mkdir(parents=True, exist_ok=True)
        CONF.write_text(slurm_conf(self.state, self.memory_mb, self.cpus))
        if GRES.exists():
            self._saved_gres = GRES.read_text()
        GRES.write_text(gres_conf())
        sock = self.state / "munge" / "munge.socket"
        # setsid: the daemons leave pytest's process group, so a Ctrl-C of the tests does not
        # take them down half-way; stop() ends them by pid.
        subprocess.run(["setsid", _sbin("munged"), "--force", f"--socket={sock}",
                        f"--pid-file={self._munged_pid}", f"--log-file={self.state}/munged.log",
                        f"--seed-file={self.state}/munge/seed"], check=True, timeout=30)
        subprocess.run(["setsid", _sbin("slurmctld"), "-c"], check=True, timeout=30)
        subprocess.run(["setsid", _sbin("slurmd"), "-c"], check=True, timeout=30)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            out = self._run("sinfo", "-h", "-o", "%T").stdout.strip()
            if out in ("idle", "mixed", "allocated"):
                return
            time.sleep(1)
        raise RuntimeError(f"the SLURM node did not come up (sinfo: {out!r}); logs in {self.state}")

    def _kill(self, pidfile: Path) -> None:
        try:
            pid = int(pidfile.read_text().strip())
        except (OSError, ValueError):
            return
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)

    def stop(self) -> None:
        self._run("scancel", "--user", "root")
        self._kill(self.state / "slurmd.pid")
        self._kill(self.state / "slurmctld.pid")
        self._kill(self._munged_pid)
        for path, saved in ((CONF, self._saved_conf), (GRES, self._saved_gres)):
            if saved is not None:
                path.write_text(saved)
            elif path.exists():
                path.unlink()
