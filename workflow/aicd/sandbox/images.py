"""Sandbox images: an optional debootstrap base (for hosts with no registry) and the sandbox
image, tagged by a hash of its build context so a changed Dockerfile or runner rebuilds."""

from __future__ import annotations

import hashlib
import logging
import subprocess
import tempfile
from pathlib import Path

from ..errors import AicdError
from .pool import CONTEXT, docker

log = logging.getLogger(__name__)
LOCAL_BASE = "aicd-base:bookworm"
BASE_LABEL = "aicd.sandbox.base"  # on every sandbox image: the base it was built on


def context_tag(context: Path = CONTEXT, base_image: str = "") -> str:
    digest = hashlib.sha256(base_image.encode())
    for path in sorted(p for p in context.rglob("*") if p.is_file()):
        digest.update(path.relative_to(context).as_posix().encode())
        digest.update(path.read_bytes())
    return f"aicd-sandbox:{digest.hexdigest()[:12]}"


def image_exists(tag: str) -> bool:
    return docker("image", "inspect", tag, timeout=60).returncode == 0


def build_debootstrap_base(mirror: str = "http://deb.debian.org/debian", suite: str = "bookworm") -> str:
    """A minimal Debian root made with debootstrap and imported: no registry needed."""
    if image_exists(LOCAL_BASE):
        return LOCAL_BASE
    with tempfile.TemporaryDirectory(prefix="aicd-rootfs-") as root:
        log.info("debootstrap %s from %s (about 30 s)", suite, mirror)
        proc = subprocess.run(["debootstrap", "--variant=minbase", suite, root, mirror], capture_output=True, text=True)
        if proc.returncode != 0:
            raise AicdError(f"debootstrap failed: {proc.stderr.strip()[-500:]} (Debian: apt-get install debootstrap)")
        # The temporary folder is 0700 and becomes the image's "/": the sandbox user must traverse it.
        Path(root).chmod(0o755)
        tar = subprocess.Popen(["tar", "-C", root, "-c", "."], stdout=subprocess.PIPE)
        imp = subprocess.run(["docker", "import", "-", LOCAL_BASE], stdin=tar.stdout, capture_output=True, text=True)
        tar.wait()
        if imp.returncode != 0:
            raise AicdError(f"docker import failed: {imp.stderr.strip()[:300]}")
    return LOCAL_BASE


def build_sandbox_image(base_image: str) -> str:
    tag = context_tag(CONTEXT, base_image)
    if image_exists(tag):
        return tag
    log.info("building %s on %s (installs nine toolchains; minutes on first build)", tag, base_image)
    proc = subprocess.run(["docker", "build", "--force-rm", "--build-arg", f"BASE_IMAGE={base_image}",
                           "--label", f"{BASE_LABEL}={base_image}", "-t", tag, str(CONTEXT)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise AicdError(f"docker build of the sandbox image failed:\n{proc.stderr.strip()[-1500:]}")
    # A smoke run as the sandbox user catches a broken image (e.g. an untraversable "/") at build time.
    smoke = docker("run", "--rm", "--network", "none", tag, "python3", "-c", "print('sandbox ok')", timeout=600)
    if smoke.returncode != 0 or "sandbox ok" not in smoke.stdout:
        docker("rmi", "-f", tag, timeout=600)
        raise AicdError(f"the sandbox image {tag} does not run programs: {smoke.stderr.strip()[:300]}")
    return tag


def remove_stale_sandbox_images(keep: str, base_image: str) -> list[str]:
    """Remove the aicd-sandbox tags other than `keep` that were built on the same base (older or
    newer contexts of this setup; on the vfs storage driver each holds ~5 GB of disk), and
    unlabelled ones (built before images carried their base). Images on another base (the
    registry setup beside the debootstrap one) stay. Best effort: a failure is logged, never
    raised. Returns the tags removed."""
    try:
        listed = docker("images", "--format", "{{.Repository}}:{{.Tag}}", "aicd-sandbox", timeout=60)
    except (AicdError, subprocess.TimeoutExpired) as err:
        log.warning("stale sandbox images not removed: %s", err)
        return []
    removed = []
    for tag in listed.stdout.split():
        if tag == keep or tag.endswith(":<none>"):
            continue
        try:
            label = docker("image", "inspect", "--format", f'{{{{index .Config.Labels "{BASE_LABEL}"}}}}', tag,
                           timeout=60).stdout.strip()
            if label not in ("", "<no value>", base_image):
                continue
            # An image a container uses stays (rmi without -f refuses it): that is wanted.
            proc = docker("rmi", tag, timeout=600)
        except (AicdError, subprocess.TimeoutExpired) as err:
            log.warning("kept the sandbox image %s: %s", tag, err)
            continue
        if proc.returncode == 0:
            removed.append(tag)
            log.info("removed the stale sandbox image %s (another build context on %s)", tag, base_image)
        else:
            log.warning("kept the sandbox image %s: %s", tag, proc.stderr.strip()[:200])
    return removed


def ensure_images(base: str = "debootstrap", base_image: str = "debian:bookworm-slim", mirror: str | None = None,
                  prune_old: bool = False) -> str:
    """The sandbox image tag, building what is missing. base: 'debootstrap' or 'registry'.
    prune_old: also remove sandbox images of other build contexts on the same base."""
    if base == "debootstrap":
        base_image = build_debootstrap_base(mirror or "http://deb.debian.org/debian")
    tag = build_sandbox_image(base_image)
    if prune_old:
        remove_stale_sandbox_images(tag, base_image)
    return tag
