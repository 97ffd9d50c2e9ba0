"""What a program can reach of the kernel and what it can learn of the host: system calls by
argument (the project's seccomp profile), socket address families, the hostname, the kernel
command line and the boot id. Real engines, real image."""

import json
import platform
import re
import shutil
import socket
import subprocess
import tempfile
import textwrap
from pathlib import Path

import pytest
from aicd.sandbox.engine import SERVICE_PREFIX
from aicd.sandbox.images import LOCAL_BASE, image_exists
from aicd.sandbox.languages import job_for
from aicd.sandbox.masks import HOST_DISKS, HOST_LOAD, HOST_NODES, disk_folders
from components import require
from sandbox_support import RUN, run_once, stdout

# What the profile allows (containers/README.md, "Socket families": of the nine toolchains only
# javac needs a socket, AF_UNIX; the network families reach nothing beyond the container's own
# network namespace); everything else is refused.
ALLOWED_FAMILIES = {socket.AF_UNIX, socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK}
NETLINK_ROUTE = 0
EPERM, EAFNOSUPPORT = 1, 97
IO_URING = {"nr 425", "nr 426", "nr 427"}
# socket and socketpair called with zero arguments ask for family 0 (AF_UNSPEC), which ours refuses
ZERO_ARG_SOCKETS = {"x86_64": {"nr 41", "nr 53"}, "aarch64": {"nr 198", "nr 199"}}.get(platform.machine(), set())
REFUSED = "ret=-1 errno=1"  # the profile's default action: EPERM

FAMILIES = textwrap.dedent("""
    import json, socket
    out = {}
    for family in range(46):
        for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_RAW, socket.SOCK_SEQPACKET):
            try:
                socket.socket(family, kind).close()
                out[family] = "ok"
                break
            except OSError as err:
                out[family] = err.errno
    netlink = {}
    for proto in (0, 9, 15, 16):  # route; audit, kobject_uevent, generic
        try:
            socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, proto).close()
            netlink[proto] = "ok"
        except OSError as err:
            netlink[proto] = err.errno
    print(json.dumps({"families": out, "netlink": netlink}))
""")


def test_only_the_families_the_toolchains_need_are_allowed(pool):
    """AF_VSOCK (which --network none does not isolate), AF_PACKET, AF_ALG, AF_BLUETOOTH, ...
    and netlink beyond routing are refused with an error, not a kill; the program goes on."""
    result = pool.run_one("Python", FAMILIES, RUN)
    assert result["status"] == "ok", result
    seen = json.loads(stdout(result))
    families = {int(f): outcome for f, outcome in seen["families"].items()}
    assert {f for f, outcome in families.items() if outcome == "ok"} == ALLOWED_FAMILIES, families
    refused = {f: outcome for f, outcome in families.items() if f not in ALLOWED_FAMILIES}
    assert all(outcome in (EPERM, EAFNOSUPPORT) for outcome in refused.values()), refused
    assert refused[socket.AF_VSOCK] == EPERM and refused[socket.AF_PACKET] == EPERM, refused  # the profile's refusal
    assert seen["netlink"] == {"0": "ok", "9": EPERM, "15": EPERM, "16": EPERM}, seen["netlink"]


def test_the_program_sees_neither_the_container_id_nor_the_hosts_boot(pool):
    code = ("import os\nprint(os.uname().nodename)\n"
            "for path in ('/proc/cmdline', '/proc/sys/kernel/random/boot_id'):\n"
            "    print(repr(open(path).read()))\n")
    result = pool.run_one("Python", code, RUN)
    assert result["status"] == "ok", result
    assert stdout(result).split("\n")[:3] == ["sandbox", "''", "''"], stdout(result)


# Given the host facts to look for (stdin: {name: text}), the mount points whose line in the
# program's mount table shows each, with the file system's type; the /etc files' roots; its
# cgroup paths, uptime and kernel build. (The mount table itself passes the runner's output cap.)
HOST_FACTS = textwrap.dedent("""
    import json, sys
    needles = json.load(sys.stdin)
    found, etc = {name: [] for name in needles}, {}
    for line in open("/proc/self/mountinfo"):
        fields, fstype = line.split(" - ")[0].split(), line.split(" - ")[1].split()[0]
        for name, text in needles.items():
            if text in line:
                found[name].append([fields[4], fstype])
        if fields[4].startswith("/etc/"):
            etc[fields[4]] = fields[3]
    print(json.dumps({"found": found, "etc": etc, "cgroup": open("/proc/self/cgroup").read().splitlines(),
                      "uptime": open("/proc/uptime").read(), "version": open("/proc/version").read()}))
""")
ETC_FILES = {"/etc/hosts", "/etc/hostname", "/etc/resolv.conf"}


def storage_root(engine) -> str:
    """Where the engine keeps its images and containers on the host."""
    if engine.name == "podman":
        api = engine.client.api
        return api._result(api._get(api._url("/libpod/info")), json=True)["store"]["graphRoot"]
    return engine.client.info()["DockerRootDir"]


def host_devtmpfs_size() -> str:
    """The `size=` of the host's devtmpfs (by default half the host's memory), as mount options
    write it."""
    with open("/proc/self/mounts") as fh:
        for line in fh:
            _, _, fstype, options, *_ = line.split()
            if fstype == "devtmpfs":
                return next((f",{opt}," for opt in options.split(",") if opt.startswith("size=")), "no size")
    return "no devtmpfs"


def test_the_program_learns_no_host_path_memory_size_uptime_or_kernel_build(spare):
    """What a program reads of its mounts, cgroups, uptime and kernel. Gone on both engines: the
    container id from the cgroup paths (on Docker a cgroup namespace of its own), the host's uptime and its
    kernel's build (read empty), this project's scratch folders; on Podman the container id and
    the engine's own folders (/etc files of the sandbox's own, from a neutrally named folder). What
    no engine lets a container hide, and docs/sandbox.md lists: the engine's storage path in the
    root file system's line (and on Docker in the lines of the /etc files it mounts from its own
    folder, named after the container), and on rootless Podman the size of the host's devtmpfs
    in the lines of the device nodes it binds from the host."""
    engine = spare.engine
    needles = {"id": spare.id, "storage": storage_root(engine), "size": host_devtmpfs_size(), "scratch": SERVICE_PREFIX}
    result = spare.run(job_for("Python", HOST_FACTS, [{"stdin": json.dumps(needles)}]))
    assert result["status"] == "ok", result
    seen = json.loads(stdout(result))
    found = {name: {point for point, _ in where} for name, where in seen["found"].items()}
    docker_etc = ETC_FILES if engine.name == "docker" else set()
    assert found["scratch"] == set(), seen["found"]
    assert found["id"] == docker_etc, seen["found"]
    assert found["storage"] <= {"/"} | docker_etc, seen["found"]
    assert all(fstype == "devtmpfs" for _, fstype in seen["found"]["size"]), seen["found"]  # device nodes, masks
    if engine.name == "docker" or not engine.rootless:
        assert found["size"] == set(), seen["found"]
    if engine.name == "podman":  # the /etc files of our own, from a folder named for nothing of the host
        assert all("/sandbox-" in root for root in seen["etc"].values()), seen["etc"]
    if engine.name == "docker":  # Podman 4's compatible API ignores CgroupnsMode: docs/sandbox.md
        assert all(line.split(":", 2)[2] == "/" for line in seen["cgroup"]), seen["cgroup"]
    assert not any(spare.id in line for line in seen["cgroup"]), seen["cgroup"]
    assert seen["uptime"] == "" and seen["version"] == "", seen


# Reads each path given on stdin (the start of a file's text, a folder's first entries, or why
# neither), and the cgroup folders under each controller's mount: what a program learns of the
# host's load, disks, NUMA nodes and other containers.
READ_HOST_FACTS = textwrap.dedent("""
    import json, os, sys
    seen = {}
    for path in json.load(sys.stdin):
        try:
            seen[path] = sorted(os.listdir(path))[:5] if os.path.isdir(path) else open(path).read()[:60]
        except OSError as err:
            seen[path] = err.strerror
    cgroups = {}
    for controller in sorted(os.listdir("/sys/fs/cgroup")):
        folder = os.path.join("/sys/fs/cgroup", controller)
        if os.path.isdir(folder):
            cgroups[controller] = sorted(e for e in os.listdir(folder) if os.path.isdir(os.path.join(folder, e)))[:5]
    print(json.dumps({"seen": seen, "cgroups": cgroups}))
""")


def test_the_hosts_load_disks_numa_nodes_and_cgroups_read_empty(spare):
    """The host's load average, pressure stall figures, interrupt counts, disks (their sizes
    and traffic, under /proc and /sys), NUMA nodes' memory use and, where the engine gives no
    cgroup namespace (Podman), the host's cgroup tree (other engines' folders, the engine
    service's memory use): every file reads empty, every folder is empty, on both engines. Before,
    all of them showed the host's."""
    paths = [*HOST_LOAD, *HOST_DISKS, *disk_folders(), *HOST_NODES]
    result = spare.run(job_for("Python", READ_HOST_FACTS, [{"stdin": json.dumps(paths)}]))
    assert result["status"] == "ok", result
    seen = json.loads(stdout(result))
    shown = {path: value for path, value in seen["seen"].items() if value not in ("", [], "No such file or directory")}
    assert not shown, shown
    assert all(folders == [] for folders in seen["cgroups"].values()), seen["cgroups"]  # no /docker, /libpod_parent


IO_URING_CALLS = textwrap.dedent("""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    params = ctypes.create_string_buffer(120)  # struct io_uring_params, zeroed: a valid request
    for number, args in ((425, (8, params)), (426, (0, 1, 0, 0, None, 0)), (427, (0, 0, None, 0))):
        ctypes.set_errno(0)
        print(number, libc.syscall(number, *args), ctypes.get_errno())
""")


def test_io_uring_is_refused_with_eperm(pool):
    result = pool.run_one("Python", IO_URING_CALLS, RUN)
    assert result["status"] == "ok", result
    assert stdout(result).split("\n")[:3] == ["425 -1 1", "426 -1 1", "427 -1 1"], stdout(result)


@pytest.fixture(scope="module")
def probe(repo):
    """tests/sandbox/syscall_probe.c, built static, in a folder any engine's user can read."""
    gcc = shutil.which("gcc")
    require(gcc is not None, "gcc (to build the static system-call probe)", "apt-get install gcc libc6-dev")
    folder = Path(tempfile.mkdtemp(prefix="aicd-probe-"))
    folder.chmod(0o755)
    built = subprocess.run([gcc, "-static", "-O0", "-o", str(folder / "probe"),
                            str(repo / "tests" / "sandbox" / "syscall_probe.c")], capture_output=True, text=True)
    require(built.returncode == 0, f"a static C build ({built.stderr.strip()[-200:]})", "apt-get install libc6-dev")
    yield folder / "probe"
    shutil.rmtree(folder, ignore_errors=True)


def outcomes(engine, image, probe, seccomp: bool) -> dict[str, str]:
    code, out, err = run_once(engine, image, ["/probe", "470"], seccomp=seccomp, binds=[f"{probe}:/probe:ro"])
    assert code == 0, err
    rows = dict(re.match(r"(.*?) ((?:ret|signal|exit)=.*)$", line).groups() for line in out.splitlines())
    assert sum(key.startswith("nr ") for key in rows) == 471, out[-500:]
    return rows


# The probe's 200 ms timer (syscall_probe.c) ends a call that blocks: such a call was let through.
ALARM = "signal=14"


def blocked_once(a: str, b: str) -> bool:
    """The same allowed call, timed out in one run and returning in the other (sync() on a busy
    vfs disk outlasts the timer now and then): neither side was refused (EPERM is errno 1)."""
    return ALARM in (a, b) and not any(re.search(r"errno=1\b", o) for o in (a, b))


def refused_by_family(key: str) -> bool:
    """An `arg` probe of a socket whose family (or netlink protocol) the profile refuses."""
    kind, _, rest = key.partition(" ")[2].partition("/")
    if kind in ("socket", "socketpair"):
        return int(rest.split("/")[0]) not in (ALLOWED_FAMILIES if kind == "socket" else {socket.AF_UNIX})
    return kind == "netlink" and int(rest) != NETLINK_ROUTE


@pytest.mark.parametrize("engine", ["docker"], indirect=True)  # its subject is Docker's built-in default
def test_the_profile_is_dockers_default_minus_io_uring_and_socket_families(engine, sandbox_image, probe):
    """Every system call number with zero arguments, and the argument-filtered calls with real
    arguments, once under Docker's default profile and once under ours, in the same container
    settings: ours refuses the three io_uring calls and sockets of the refused families (EPERM),
    and differs from Docker's default nowhere else. After a Docker upgrade that changes its
    default, this says which calls to add or drop. (Podman's default, containers-common's, is
    another list; the same profile file is checked on Podman by the tests above.)"""
    image = LOCAL_BASE if image_exists(LOCAL_BASE, engine) else sandbox_image  # small: quick to create on vfs
    default, ours = outcomes(engine, image, probe, False), outcomes(engine, image, probe, True)
    assert default.keys() == ours.keys()
    differ = {key for key in default if default[key] != ours[key] and not blocked_once(default[key], ours[key])}
    unexplained = {key: (default[key], ours[key]) for key in differ - IO_URING - ZERO_ARG_SOCKETS
                   if not refused_by_family(key)}
    assert not unexplained, unexplained
    assert all(ours[key] == REFUSED for key in IO_URING | ZERO_ARG_SOCKETS)
    assert all(ours[key] == REFUSED for key in ours if key.startswith("arg") and refused_by_family(key))
    opened = {int(key.split("/")[1]) for key in ours if key.startswith("arg socket/") and ours[key] == "ret=1 errno=0"}
    assert opened <= ALLOWED_FAMILIES, opened
