"""What a program is not shown of the host: the paths masked in every sandbox container (a file
reads empty, a folder is empty), on each engine in the form it takes. What stays visible, and
why: docs/sandbox.md, "What a program sees of the host"."""

from __future__ import annotations

import os

from .engine import Engine

# What a program has no use for and could learn the host from. Docker replaces its default list
# when given one (moby's oci defaults, repeated here); Podman adds `mask=` paths to its own.
DOCKER_MASKED = ("/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
                 "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
                 "/sys/devices/virtual/powercap")
# The host's boot command line and boot id, its uptime, and its kernel's build (compiler, builder
# host): read empty.
HIDDEN = ("/proc/cmdline", "/proc/sys/kernel/random/boot_id", "/proc/uptime", "/proc/version")
# The host's load and what it is busy with (its load average, pressure stall figures, interrupt
# counts), its disks (their sizes and traffic) and its NUMA nodes' memory use: no toolchain reads
# them (a runtime that asks for the load average gets an error, as on a host without one), and a
# neighbour's work or the host's size could be read from them.
HOST_LOAD = ("/proc/loadavg", "/proc/pressure", "/proc/interrupts", "/proc/softirqs")
HOST_DISKS = ("/proc/diskstats", "/proc/partitions", "/sys/block", "/sys/class/block", "/sys/dev/block",
              "/sys/devices/virtual/block")
HOST_NODES = ("/sys/devices/system/node",)
# Where the engine gives the container no cgroup namespace of its own (Podman 4's compatible API
# ignores CgroupnsMode), /sys/fs/cgroup shows the host's whole cgroup tree: other engines' folders
# (/docker, /libpod_parent) and the memory the engine's own service uses. Masked where the runner
# counts memory itself (rootless: no cgroup limit is there to read); a rootful engine keeps it,
# whose limits the JVM reads from there.
CGROUP_TREE = "/sys/fs/cgroup"
SYS_BLOCK = "/sys/class/block"


def disk_folders(sys_block: str = SYS_BLOCK) -> list[str]:
    """The `block` folders under /sys/devices that hold this machine's disks (a disk's `size` is
    there as well as under /sys/block): each disk's path cut after its last "/block". Found on the
    machine that creates the containers; a path the engine's host lacks is not masked (runc skips
    a masked path that does not exist)."""
    folders = set()
    try:
        names = os.listdir(sys_block)
    except OSError:
        return []
    for name in names:
        real = os.path.realpath(os.path.join(sys_block, name))
        head, found, _ = real.rpartition("/block/")
        if found and head.startswith("/sys/devices/"):
            folders.add(head + "/block")
    return sorted(folders)


def masked(engine: Engine) -> list[str]:
    """Every path masked in this engine's containers, in order."""
    paths = [*HIDDEN, *HOST_LOAD, *HOST_DISKS, *disk_folders(), *HOST_NODES]
    if engine.name != "docker" and "memory" in engine.unenforced:
        paths.append(CGROUP_TREE)
    return paths


def mask_settings(engine: Engine) -> dict:
    """The masks as HostConfig settings. Docker takes a whole list (MaskedPaths, its own defaults
    repeated). Podman's compatible API ignores MaskedPaths and reads `mask=` security options,
    whose paths a colon separates, as it does its tmpfs options: a folder whose path has one (a PCI
    address) is covered with an empty folder of the engine's scratch folder, bound read-only (the
    mount table then names that folder, as it names the /etc files' beside it)."""
    if engine.name == "docker":
        return {"MaskedPaths": [*DOCKER_MASKED, *masked(engine)]}
    plain = [path for path in masked(engine) if ":" not in path]
    covered = [{"Type": "bind", "Source": str(engine.empty_folder()), "Target": path, "ReadOnly": True}
               for path in masked(engine) if ":" in path]
    return {"SecurityOpt": ["mask=" + ":".join(plain)], "Mounts": covered}
