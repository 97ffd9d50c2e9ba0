"""What every sandbox container is given and denied, on each engine: the container's
configuration for the Engine API (the `docker` SDK sends it to Docker or to Podman's compatible
service), the same settings as `docker run` flags (by hand, and the benchmark's CLI path), and
the limits the trusted runner enforces itself where the engine cannot."""

from __future__ import annotations

import json
import os
import resource
from pathlib import Path

from .engine import Engine
from .limits import Limits
from .masks import mask_settings

# What the trusted runner needs as root: drop to the program's user (SETUID, SETGID), hand it
# the job folder (CHOWN), kill what it leaves (KILL), and remove what it leaves (DAC_OVERRIDE,
# FOWNER). The program itself runs with none.
RUNNER_CAPS = ("SETUID", "SETGID", "CHOWN", "KILL", "DAC_OVERRIDE", "FOWNER")
# Where the runner counts the program's memory itself it reads the program's smaps and open
# descriptors, which the kernel shows another uid only with this capability. (The program, an
# unprivileged uid that exec'd with no-new-privileges, never holds it.)
METER_CAP = "SYS_PTRACE"
# Where a cgroup caps the container's memory and the runner is in the host's user namespace
# (rootful), the runner takes itself and tini out of the OOM killer's reach (oom_score_adj
# -1000) and pins each program at 1000, which lowering and pinning need this capability for. A
# program killed for memory that only its exit frees (shared memory, dropped from its mapping)
# otherwise left the runner the next victim, before that exit came (containers/sandbox/spawning.py).
OOM_GUARD_CAP = "SYS_RESOURCE"
CAP_SYS_RESOURCE = 24  # its bit in a capability set


def bounding_has(bit: int) -> bool:
    """Whether this process's capability bounding set has a capability: an engine started on
    this machine can grant it only then (a host may withhold one from every process)."""
    try:
        with open("/proc/self/status") as fh:
            return bool(int(next(line.split()[1] for line in fh if line.startswith("CapBnd:")), 16) >> bit & 1)
    except (OSError, StopIteration, ValueError):
        return False


def oom_guard(engine: Engine) -> bool:
    """Whether the runner is given OOM_GUARD_CAP: where a cgroup caps memory on a rootful engine
    that can grant it (not refused before, and in this machine's bounding set)."""
    return (engine.oom_guard and "memory" not in engine.unenforced and not engine.rootless
            and bounding_has(CAP_SYS_RESOURCE))
# The program's uid inside the container. The kernel keeps per-user limits by uid: processes
# (RLIMIT_NPROC), pipe buffers (pipe-user-pages-soft), inotify instances and watches, pending
# signals, POSIX message queue bytes. Programs that share a uid share them: one program that
# exhausts them leaves its neighbour 8 KB pipes and no inotify instance. So where containers share
# the host's uids (Docker rootful) or one user namespace (rootless Docker), each container's
# program gets a uid of its own from PROGRAM_UIDS: above Debian's regular accounts (UID_MAX 60000)
# and below nobody (65534), so no account of the host, and inside any rootless namespace of 65,536
# ids; no two sandbox containers on an engine have the same (pool.free_program_uid). Where each
# container has a user namespace of its own (rootless Podman, --userns=auto), the program is uid
# USERNS_PROGRAM_UID there, mapped to host uids no other container has, so that a namespace of
# USERNS_IDS ids holds it and the default 65,536 subordinate ids of a user give 64 containers.
# The image has users 10001 (ad-hoc runs) and 1000; the others have no entry in /etc/passwd (the
# toolchains do not need one: Java's user.home reads "?").
PROGRAM_UID = 10001
PROGRAM_UIDS = range(60001, 65534)
USERNS_PROGRAM_UID = 1000
USERNS_IDS = 1024
UID_LABEL = "aicd.program_uid"  # on every sandbox container: its program's uid
CONTEXT = Path(__file__).resolve().parents[3] / "containers" / "sandbox"  # the sandbox image's build context
# The project's seccomp profile (containers/README.md): in the build context, so the image
# tag's hash covers it; sent to the engine from here (seccomp_profile).
SECCOMP_PROFILE = CONTEXT / "seccomp.json"
AF_NETLINK, NETLINK_SOCK_DIAG = 16, 4
# tini from the image is PID 1 and reaps orphans: the same on every engine, with no init binary
# needed on the host (Podman's --init wants catatonit, which Debian's podman does not bring).
RUNNER_COMMAND = ["/usr/bin/tini", "--", "python3", "-I", "-S", "/opt/aicd/runner.py", "--serve"]
HOSTNAME = "sandbox"  # not the container id
# /etc files of our own: nothing of the host (its nameservers, its /etc/hosts entries, which
# rootless Podman copies in), nor the engine's storage path and container id that its own bind
# mounts of these files show in /proc/self/mountinfo. Podman bind-mounts them from the engine's
# scratch folder; Docker's daemon may not share this machine's files (docker-in-docker), so there
# DNS settings of our own replace the host's resolv.conf, and its /etc/hosts has only loopback.
ETC_FILES = {
    "hosts": f"127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t{HOSTNAME}\n",
    "hostname": f"{HOSTNAME}\n",
    "resolv.conf": "# no network: no nameserver\n",
}
DOCKER_DNS = {"Dns": ["127.0.0.1"], "DnsSearch": ["."], "DnsOptions": ["ndots:1"]}
PROGRAM_NOFILE = 4096  # open files per program process (the runner's own rlimit)
# How often the runner counts what the engine cannot cap (tmpfs inodes, the program's memory).
WATCH_POLL_S = 0.01
# Where the runner counts memory it makes the program's memfds itself, as unnamed files on a tmpfs
# of its own that the program cannot open by name (containers/sandbox/gate.py): their pages are
# then counted wherever the memfd is (mapped, held, or in flight in a socket).
MEMFD_MOUNT = "/dev/memfd"
# At its time limit a program that still wants the CPU, slowed by others' load, runs on while its
# CPU time stays within its share (time limit x cpus), up to this many times the limit
# (containers/sandbox/cpu_share.py, deadline). A program asleep, or slowed by itself (more threads
# wanting the CPU than its share has CPUs), never waits for it.
WALL_GRACE = 10
# RLIMIT_DATA counts writable mappings, used or not: a JVM with -Xss64m maps ~800 MB of thread
# stacks and heap at start while using ~40 MB. So the per-process rlimit is only a backstop
# against a burst between two counts, memory_mb beyond the limit that the runner's count holds.
DATA_BACKSTOP_MB = 1024
# The host's per-user inotify limits (instances, watches) and the kernel's defaults, shared out by
# user_limit_share where the engine is rootless; ROOTLESS_CONTAINERS: the containers assumed at
# once where the engine does not say how many subordinate ids its user has.
INOTIFY_LIMITS = (("/proc/sys/fs/inotify/max_user_instances", 128), ("/proc/sys/fs/inotify/max_user_watches", 8192))
ROOTLESS_CONTAINERS = 64


def per_container_userns(engine: Engine) -> bool:
    """Whether each container gets a user namespace, and host uids, of its own (Podman's
    --userns=auto): rootless Podman where the runner stands in for the pids limit. Rootless, a
    shared namespace maps the program's uid of every container, in every pool of the user, to one
    host uid, whose processes RLIMIT_NPROC counts together (and with them pipe buffers and other
    per-user kernel counts): one program's fork bomb would starve every other."""
    return engine.name == "podman" and engine.rootless and "pids" in engine.unenforced


def program_uid(engine: Engine) -> int:
    """The program's uid where a container has a user namespace of its own, else the image's
    default (a pool gives each of its containers one of PROGRAM_UIDS instead: pool.free_program_uid)."""
    return USERNS_PROGRAM_UID if per_container_userns(engine) else PROGRAM_UID


def tmpfs_mounts(lim: Limits, inode_caps: bool = True, memfds: bool = False) -> dict[str, str]:
    """Every tmpfs the program can write, with a size cap and, where the engine takes it, an
    inode cap (tmpfs inodes are kernel memory charged to the container: a flood of empty files
    would reach the OOM killer long before any size cap). Podman 4 refuses `nr_inodes`, `uid`
    and `gid`: there the runner counts the inodes itself (runner_limits), and `notmpcopyup` keeps
    Podman from copying the image's files at those paths into the mounts. memfds: the runner's
    own tmpfs for the program's memfds (MEMFD_MOUNT), root's and closed to the program; its size
    is only a backstop beyond the memory count, which stops the program first (at memory_mb, with
    the rest of its memory), as RLIMIT_DATA is; exec allowed, as on a memfd (a JIT maps its code
    from one)."""
    def caps(size_mb: int) -> str:
        return f"size={size_mb}m" + (f",nr_inodes={lim.inodes(size_mb)}" if inode_caps else ",notmpcopyup")

    owner = ",uid=0,gid=0" if inode_caps else ""  # root's already where the options are refused
    mounts = {
        "/work": f"rw,exec,nosuid,{caps(lim.work_mb)}{owner},mode=755",
        "/tmp": f"rw,exec,nosuid,{caps(lim.tmp_mb)},mode=1777",
        # A /dev/shm of our own (Docker's --shm-size sets no inode cap); noexec on every engine.
        "/dev/shm": f"rw,nosuid,nodev,noexec,{caps(lim.tmp_mb)},mode=1777",
    }
    if not inode_caps:
        # Podman's --read-only mounts writable, uncapped tmpfs on /run and /var/tmp, and its
        # compatible API has no --read-only-tmpfs=false: cover them with empty read-only ones.
        mounts |= dict.fromkeys(("/run", "/var/tmp"), "ro,nosuid,nodev,noexec,size=16k,mode=755,notmpcopyup")
    if memfds:
        inodes = f",nr_inodes={lim.inodes(lim.tmp_mb)},uid=0,gid=0" if inode_caps else ",notmpcopyup"
        mounts[MEMFD_MOUNT] = f"rw,nosuid,nodev,size={lim.memory_mb + DATA_BACKSTOP_MB}m{inodes},mode=700"
    return mounts


def sysctls(lim: Limits) -> dict[str, str]:
    """SysV IPC and POSIX message queues are not tmpfs: capped by sysctl. Semaphores as Linux's
    historical defaults (250 per set, 32,000 in all, 128 sets), 64 shared memory segments of
    tmp_mb in all, 16 message queues, 16 POSIX queues."""
    return {"kernel.shmmax": str(lim.tmp_mb << 20), "kernel.shmall": str(lim.tmp_mb << 8), "kernel.shmmni": "64",
            "kernel.sem": "250 32000 32 128", "kernel.msgmni": "16", "fs.mqueue.queues_max": "16"}


def _hard(kind: int) -> int:
    hard = resource.getrlimit(kind)[1]
    return 1 << 20 if hard == resource.RLIM_INFINITY else hard


def pid_max() -> int:
    try:
        with open("/proc/sys/kernel/pid_max") as fh:
            return int(fh.read())
    except (OSError, ValueError):
        return 1 << 22  # the kernel's ceiling for pid_max


def ulimits() -> list[dict]:
    """No core files; explicit open-file and process limits (rootful Podman's defaults exceed
    what a host may allow: "error setting rlimit type 7"), at this process's own hard limits, and
    processes at most the kernel's pid_max: rootful Podman lowers its own process limit to
    pid_max, and a container that asks more fails to start ("error setting rlimit type 6", seen
    where root lacks CAP_SYS_RESOURCE)."""
    nproc = min(_hard(resource.RLIMIT_NPROC), pid_max())
    return [{"Name": "core", "Soft": 0, "Hard": 0},
            {"Name": "nofile", "Soft": _hard(resource.RLIMIT_NOFILE), "Hard": _hard(resource.RLIMIT_NOFILE)},
            {"Name": "nproc", "Soft": nproc, "Hard": nproc}]


def seccomp_profile(engine: Engine) -> dict:
    """The project's profile (SECCOMP_PROFILE) as this engine's containers get it: where the runner
    counts memory it also lets the container open the kernel's socket diagnostics
    (NETLINK_SOCK_DIAG), which the runner reads the socket buffers from (socket_memory.py) and
    the program's own filter refuses the program (gate.py)."""
    profile = json.loads(SECCOMP_PROFILE.read_text())
    if "memory" in engine.unenforced:
        profile["syscalls"].append({"names": ["socket"], "action": "SCMP_ACT_ALLOW", "args": [
            {"index": 0, "value": AF_NETLINK, "op": "SCMP_CMP_EQ"},
            {"index": 2, "value": NETLINK_SOCK_DIAG, "op": "SCMP_CMP_EQ"}]})
    return profile


def container_config(engine: Engine, image: str, lim: Limits, labels: dict[str, str], command: list[str] | None = None,
                     seccomp: bool = True, user: str = "0:0", binds: list[str] | None = None,
                     uid: int | None = None) -> dict:
    """The Engine API's create body of a sandbox container: root for the trusted runner with only
    RUNNER_CAPS (and METER_CAP where it counts memory, OOM_GUARD_CAP where a cgroup does, rootful),
    tini as PID 1, no network, read-only root, memory = swap cap, pids, CPU, the project's seccomp
    profile (seccomp=False: the engine's default, for comparing the two), a size (and inode) cap
    on every tmpfs the program can write, the host's paths masked (masks.py) and its /etc files
    replaced (ETC_FILES), a user namespace of the container's own where the runner counts
    processes, the program's uid for the runner (`uid`, default program_uid), and the runner's
    stdin attached and closed when the pool's connection goes (StdinOnce): a pool killed outright
    leaves containers whose runner exits and which remove themselves."""
    uid = program_uid(engine) if uid is None else uid
    security = ["no-new-privileges"] + ([engine.seccomp_option(seccomp_profile(engine))] if seccomp else [])
    caps = list(RUNNER_CAPS) + ([METER_CAP] if "memory" in engine.unenforced else [])
    caps += [OOM_GUARD_CAP] if oom_guard(engine) else []
    host = {
        "NetworkMode": "none", "ReadonlyRootfs": True, "AutoRemove": True, "Init": False,
        "Tmpfs": tmpfs_mounts(lim, engine.inode_caps, "memory" in engine.unenforced), "Sysctls": sysctls(lim),
        "Memory": lim.memory_mb << 20, "MemorySwap": lim.memory_mb << 20, "PidsLimit": lim.pids,
        "NanoCpus": int(lim.cpus * 1e9), "CapDrop": ["ALL"], "CapAdd": caps, "SecurityOpt": security,
        "Ulimits": ulimits(), "Binds": list(binds or []),
        "CgroupnsMode": "private",  # /proc/self/cgroup and the cgroup mounts show "/", not the container id
    }
    settings = mask_settings(engine)
    host["SecurityOpt"] += settings.pop("SecurityOpt", [])
    host |= settings
    if engine.name == "docker":
        host |= DOCKER_DNS
    else:
        host["Binds"] += [f"{engine.staged(name, text)}:/etc/{name}:ro" for name, text in ETC_FILES.items()]
    if per_container_userns(engine):
        host["UsernsMode"] = f"auto:size={USERNS_IDS}"
    return {"Image": image, "Cmd": command or RUNNER_COMMAND, "Hostname": HOSTNAME, "User": user,
            "Env": [f"AICD_PROGRAM_UID={uid}"], "WorkingDir": "/work", "Labels": {**labels, UID_LABEL: str(uid)},
            "OpenStdin": True, "StdinOnce": True, "AttachStdin": True, "AttachStdout": True, "AttachStderr": True,
            "HostConfig": host}


def isolation_flags(lim: Limits, seccomp: bool = True) -> list[str]:
    """The same settings as `docker run` flags (Docker: by hand, and the benchmark's CLI path)."""
    tmpfs = [arg for point, opts in tmpfs_mounts(lim).items() for arg in ("--tmpfs", f"{point}:{opts}")]
    sysctl = [arg for key, value in sysctls(lim).items() for arg in ("--sysctl", f"{key}={value}")]
    caps = [arg for cap in RUNNER_CAPS for arg in ("--cap-add", cap)]
    profile = ["--security-opt", f"seccomp={SECCOMP_PROFILE}"] if seccomp else []
    limits = [arg for u in ulimits() for arg in ("--ulimit", f"{u['Name']}={u['Soft']}:{u['Hard']}")]
    dns = ["--dns", *DOCKER_DNS["Dns"], "--dns-search", *DOCKER_DNS["DnsSearch"], "--dns-option",
           *DOCKER_DNS["DnsOptions"]]
    return ["--network", "none", "--read-only", "--hostname", HOSTNAME, *dns, *tmpfs, *sysctl,
            "--memory", f"{lim.memory_mb}m", "--memory-swap", f"{lim.memory_mb}m",
            "--pids-limit", str(lim.pids), "--cpus", str(lim.cpus),
            "--user", "0:0", "--cap-drop", "ALL", *caps, "--security-opt", "no-new-privileges", *profile, *limits]


def kernel_at_least(major: int, minor: int) -> bool:
    """Whether the kernel (the host's: containers share it) is this version or later."""
    try:
        version = tuple(int(part) for part in os.uname().release.split("-")[0].split(".")[:2])
    except ValueError:
        return False
    return version >= (major, minor)


def inode_gate() -> bool:
    """Whether the kernel can stop each new file before it is made: seccomp user notification
    that lets the call go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE, Linux 5.5)."""
    return kernel_at_least(5, 5)


def memfd_emulation() -> bool:
    """Whether the runner can make the program's memfds itself: a descriptor placed in the program
    as a notified call's result (SECCOMP_ADDFD_FLAG_SEND, Linux 5.14). Before that, memfd_create
    is refused where the runner counts memory."""
    return kernel_at_least(5, 14)


def user_limit_share(engine: Engine, path: str, default: int) -> int:
    """One container's share of a per-user limit of the host (`path` under /proc/sys, `default`
    where it cannot be read) where the engine is rootless: the kernel counts what each container's
    program makes (inotify instances, watches) against its uid in the container's user namespace
    and, up the chain of namespaces, against the user running the engine, whose limit all of that
    user's containers and processes then share. The user keeps half; the other half is split
    among the containers the user's subordinate ids allow at once (USERNS_IDS each; 64 for the
    default 65,536), so no program can take a neighbour's share or the user's own."""
    try:
        with open(path) as fh:
            limit = int(fh.read())
    except (OSError, ValueError):
        limit = default
    containers = max(1, engine.subordinate_ids // USERNS_IDS) if engine.subordinate_ids else ROOTLESS_CONTAINERS
    return max(1, limit // 2 // containers)


def runner_limits(engine: Engine, lim: Limits) -> dict:
    """What the runner enforces on the program itself (containers/sandbox/supervision.py): file
    size and open files always (RLIMIT_FSIZE, RLIMIT_NOFILE), and the time limit as the program's
    CPU share (`cpu_share`: a program slowed by others' load runs on, up to WALL_GRACE times the
    limit, while its CPU time stays within time limit x cpus); where the engine cannot cap them in
    a cgroup, the memory of all the program's processes together as a cgroup would charge it
    (counted every WATCH_POLL_S, its memfds made by the runner on MEMFD_MOUNT, the socket buffers of
    its network namespace counted once it makes a socket, with RLIMIT_DATA as a per-process
    backstop; containers/sandbox/meter.py and gate.py), processes (RLIMIT_NPROC `nproc`, and each
    fork checked against it before it is made where the kernel allows: `fork_gate`) and CPU time
    (the whole sandbox's, counted every WATCH_POLL_S and stopped at its share, RLIMIT_CPU per process
    as a backstop); where tmpfs mounts take no inode cap, their inode counts, checked before each
    new inode where the kernel allows (`inode_gate`; containers/sandbox/gate.py), every WATCH_POLL_S
    as well; and where the engine is rootless, the program's share of the user's inotify instances
    and watches (`inotify`, user_limit_share)."""
    out: dict = {"fsize_mb": max(lim.work_mb, lim.tmp_mb), "nofile": PROGRAM_NOFILE, "cpu_share": lim.cpus,
                 "wall_grace": WALL_GRACE}
    missing = engine.unenforced
    sizes = {"/work": lim.work_mb, "/tmp": lim.tmp_mb, "/dev/shm": lim.tmp_mb}  # what the program can write
    if "memory" in missing:
        sizes[MEMFD_MOUNT] = lim.tmp_mb  # its inode cap: as many memfds as /dev/shm has files
        out |= {"memory_mb": lim.memory_mb, "data_mb": lim.memory_mb + DATA_BACKSTOP_MB, "memory_mounts": list(sizes),
                "memfd": "emulate" if memfd_emulation() else "refuse", "memfd_dir": MEMFD_MOUNT}
    if "pids" in missing:  # per container: each has a uid, or a user namespace, of its own
        out |= {"nproc": lim.pids, "fork_gate": inode_gate()}
    if "cpu" in missing:
        out["cpus"] = lim.cpus
    if "inodes" in missing:
        out["inodes"] = {mount: lim.inodes(size_mb) for mount, size_mb in sizes.items()}
        out["inode_gate"] = inode_gate()
    if engine.rootless and inode_gate():
        out["inotify"] = [user_limit_share(engine, path, default) for path, default in INOTIFY_LIMITS]
    if missing:
        out["poll_s"] = WATCH_POLL_S
    return out


def limits_line(engine: Engine, lim: Limits) -> str:
    """One line for the start of a run: the engine, what the runner enforces in its stead, and
    what it cannot promise here."""
    missing = engine.unenforced
    head = f"Sandbox: {engine.describe()}"
    if not missing:
        return f"{head}: the engine enforces every limit."
    poll = f"{WATCH_POLL_S * 1000:g} ms"
    pids = f"RLIMIT_NPROC {lim.pids} " + ("in each container's own user namespace and host uids (--userns=auto)"
                                          if per_container_userns(engine) else "for a uid of each container's own")
    pids += ", each fork checked against it before it is made" if inode_gate() else ""
    memfds = ("memfds made by the runner on a tmpfs it counts" if memfd_emulation() else
              "memfd_create refused (Linux 5.14 lets the runner make them)")
    stand_ins = {"memory": f"the program's memory as a cgroup charges it (anonymous, shared, memfds, SysV, tmpfs "
                 f"files, socket buffers; shared anonymous mappings at their size) counted every {poll} (less often "
                 f"where a count is costly) and stopped at {lim.memory_mb} MB, {memfds}, RLIMIT_DATA "
                 f"{lim.memory_mb + DATA_BACKSTOP_MB} MB per process",
                 "pids": pids,
                 "cpu": f"the CPU time of all the program's processes counted every {poll} and stopped at "
                 f"{lim.cpus:g} CPU over each step's time limit, a kill rather than a quota",
                 "inodes": ("tmpfs inodes counted before each new one" if inode_gate() else
                            f"tmpfs inodes counted every {poll}") + ", a flood stopped at the cap as memory_limit "
                 "rather than refused with ENOSPC"}
    shares = runner_limits(engine, lim).get("inotify")
    if shares:  # not a cgroup's limit: the user's, which every container of the user counts against
        missing = [*missing, "inotify"]
        stand_ins["inotify"] = (f"{shares[0]} inotify instance{'s' if shares[0] != 1 else ''} and {shares[1]:,} "
                                "watches a program, its share of this user's")
    cgroup = [m for m in missing if m not in ("inodes", "inotify")]
    line = (f"{head}: the engine cannot enforce {', '.join(m for m in missing if m != 'inotify')} here; the runner "
            f"stands in ({'; '.join(stand_ins[m] for m in missing)})")
    if cgroup:
        line += (", but cannot promise the container's total (memory the kernel holds for it, a burst between two "
                 "counts, a shared mapping shrunk between two counts); ask the admin for cgroup v2 "
                 f"with the {', '.join(cgroup)} controllers delegated to users (systemd: Delegate=yes for "
                 "user@.service)")
    return line + "."
