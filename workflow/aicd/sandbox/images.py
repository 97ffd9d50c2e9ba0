"""Sandbox images: an optional debootstrap base (for hosts with no registry) and the sandbox
image, tagged by a hash of its build context so a changed Dockerfile or runner rebuilds. Built
with the engine's own builder (`docker build`, `podman build`); looked up, smoke-tested, copied
between engines and pruned through the SDK."""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import tempfile
from pathlib import Path

from ..common.errors import AicdError
from .engine import Engine
from .isolation import CONTEXT, ETC_FILES, ulimits

log = logging.getLogger(__name__)
LOCAL_BASE = "aicd-base:bookworm"
BASE_LABEL = "aicd.sandbox.base"  # on every sandbox image: the base it was built on
REPOSITORY = "aicd-sandbox"


def context_files(context: Path = CONTEXT) -> list[Path]:
    """The build context's files, less Python's byte-code caches (a host test that imports the
    runner's modules writes one; .dockerignore keeps it out of the build too)."""
    return sorted(p for p in context.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def context_tag(context: Path = CONTEXT, base_image: str = "") -> str:
    digest = hashlib.sha256(base_image.encode())
    for path in context_files(context):
        digest.update(path.relative_to(context).as_posix().encode())
        digest.update(path.read_bytes())
    return f"{REPOSITORY}:{digest.hexdigest()[:12]}"


def short_name(tag: str) -> str:
    """NAME:TAG as Docker writes it: Podman names what it builds or loads localhost/NAME:TAG, and
    what its Docker-compatible API builds docker.io/library/NAME:TAG."""
    for prefix in ("localhost/", "docker.io/library/"):
        tag = tag.removeprefix(prefix)
    return tag


def image_exists(tag: str, engine: Engine) -> bool:
    import docker.errors

    try:
        engine.client.images.get(tag)
        return True
    except docker.errors.ImageNotFound:
        return False
    except (docker.errors.DockerException, OSError) as err:  # a daemon that stopped answering, a timeout
        raise AicdError(f"cannot ask {engine.name} whether the image {tag} exists: {str(err)[:300]}") from None


def _cli(engine: Engine, *args: str, **kwargs) -> subprocess.CompletedProcess:
    """The engine's command line, talking to the same engine as the SDK: Docker follows
    DOCKER_HOST by itself; Podman needs --remote to use the service CONTAINER_HOST names."""
    remote = ["--remote"] if engine.name == "podman" and os.environ.get("CONTAINER_HOST") else []
    return subprocess.run([engine.cli(), *remote, *args], capture_output=True, text=True, **kwargs)


def base_cache(suite: str = "bookworm") -> Path:
    """The debootstrap root of LOCAL_BASE as a tar file, kept between builds and engines:
    $AICD_CACHE/sandbox (default ~/.cache/aicd/sandbox). Delete it to make the base afresh."""
    return Path(os.path.expanduser(os.environ.get("AICD_CACHE") or "~/.cache/aicd")) / "sandbox" / f"base-{suite}.tar"


def debootstrap_root(tarball: Path, mirror: str, suite: str) -> None:
    """A minimal Debian root made with debootstrap, written to `tarball` (atomically)."""
    if os.geteuid() != 0:
        raise AicdError(f"the {LOCAL_BASE} base is made with debootstrap, which needs root, and {tarball} (a "
                        "root made before, by root) is not there: make it once as root (python -m aicd.sandbox "
                        "images), use --base registry (execution.base: registry), or load an image built elsewhere "
                        "(docker save | podman load)")
    with tempfile.TemporaryDirectory(prefix="aicd-rootfs-") as root:
        log.info("debootstrap %s from %s (about a minute)", suite, mirror)
        proc = subprocess.run(["debootstrap", "--variant=minbase", suite, root, mirror], capture_output=True, text=True)
        if proc.returncode != 0:
            raise AicdError(f"debootstrap failed: {proc.stderr.strip()[-500:]} (Debian: apt-get install debootstrap)")
        # The temporary folder is 0700 and becomes the image's "/": the sandbox user must traverse it.
        Path(root).chmod(0o755)
        for name, text in ETC_FILES.items():  # debootstrap copies the building host's hostname and resolv.conf
            (Path(root) / "etc" / name).write_text(text)
        tarball.parent.mkdir(parents=True, exist_ok=True)
        partial = tarball.with_name(f".{tarball.name}.{os.getpid()}")
        try:
            subprocess.run(["tar", "-C", root, "-cf", str(partial), "."], check=True, capture_output=True)
            os.replace(partial, tarball)
        except subprocess.CalledProcessError as err:
            raise AicdError(f"cannot write the base root {tarball}: {err.stderr.decode(errors='replace')[-300:]}") \
                from None
        finally:
            partial.unlink(missing_ok=True)


def build_debootstrap_base(engine: Engine, mirror: str = "http://deb.debian.org/debian", suite: str = "bookworm") -> str:
    """A minimal Debian root made with debootstrap and imported: no registry needed. The root is
    kept (base_cache), so another engine, or this one after its images went, imports it again
    without debootstrap, and without root (rootless Podman)."""
    if image_exists(LOCAL_BASE, engine):
        return LOCAL_BASE
    tarball = base_cache(suite)
    if not tarball.exists():
        debootstrap_root(tarball, mirror, suite)
    with open(tarball, "rb") as fh:
        imp = _cli(engine, "import", "-", LOCAL_BASE, stdin=fh)
    if imp.returncode != 0:
        raise AicdError(f"{engine.name} import of {tarball} failed: {imp.stderr.strip()[:300]}")
    return LOCAL_BASE


def smoke_run_args() -> dict:
    """The smoke test's container settings: no network, and the sandbox's own rlimits (rootful
    Podman's default open-file limit can pass the host's hard limit, and the container then
    cannot start: "error setting rlimit type 7")."""
    import docker.types

    return {"network_mode": "none", "remove": True, "stdout": True, "stderr": True,
            "ulimits": [docker.types.Ulimit(name=u["Name"], soft=u["Soft"], hard=u["Hard"]) for u in ulimits()]}


def smoke_test(tag: str, engine: Engine) -> str | None:
    """None when the image runs a program as its default (unprivileged) user, else why not: a
    broken image (e.g. an untraversable "/") is caught at build time."""
    import docker.errors

    try:
        out = engine.client.containers.run(tag, ["python3", "-c", "print('sandbox ok')"], **smoke_run_args())
    except docker.errors.DockerException as err:
        return str(err)[:300]
    return None if b"sandbox ok" in out else out.decode("utf-8", "replace")[:300]


def build_sandbox_image(base_image: str, engine: Engine) -> str:
    tag = context_tag(CONTEXT, base_image)
    if image_exists(tag, engine):
        return tag
    log.info("building %s on %s with %s (installs nine toolchains; minutes on first build)", tag, base_image,
             engine.name)
    # The Dockerfile labels the image with its base (BASE_LABEL): a --label here would be one more
    # build step, a whole copy of the image on Docker's vfs driver.
    proc = _cli(engine, "build", "--force-rm", "--build-arg", f"BASE_IMAGE={base_image}", "-t", tag, str(CONTEXT))
    if proc.returncode != 0:
        raise AicdError(f"{engine.name} build of the sandbox image failed:\n{proc.stderr.strip()[-1500:]}")
    why = smoke_test(tag, engine)
    if why is not None:
        engine.client.images.remove(tag, force=True)
        raise AicdError(f"the sandbox image {tag} does not run programs: {why}")
    return tag


def copy_image(tag: str, source: Engine, target: Engine) -> None:
    """Stream an image from one engine into another (Podman loads what Docker saved)."""
    import docker.errors

    try:
        chunks = source.client.api.get_image(tag)
        for _ in target.client.api.load_image(chunks):
            pass
    except docker.errors.DockerException as err:
        raise AicdError(f"copying {tag} from {source.name} to {target.name} failed: {str(err)[:300]}") from None
    if not image_exists(tag, target):
        raise AicdError(f"copying {tag} from {source.name} to {target.name} left no such image there")


def sandbox_images(engine: Engine) -> list:
    """(tag, image) of every aicd-sandbox tag on the engine."""
    found = []
    for image in engine.client.images.list():
        for tag in image.tags:
            if short_name(tag).split(":", 1)[0] == REPOSITORY:
                found.append((short_name(tag), image))
    return found


def remove_stale_sandbox_images(keep: str, base_image: str, engine: Engine) -> list[str]:
    """Remove the aicd-sandbox tags other than `keep` that were built on the same base (older or
    newer contexts of this setup; on the vfs storage driver each holds ~5 GB of disk), and
    unlabelled ones (built before images carried their base). Images on another base (the
    registry setup beside the debootstrap one) stay. Best effort: a failure is logged, never
    raised. Returns the tags removed."""
    import docker.errors

    try:
        listed = sandbox_images(engine)
    except docker.errors.DockerException as err:
        log.warning("stale sandbox images not removed: %s", err)
        return []
    removed = []
    for tag, image in listed:
        if tag == keep:
            continue
        label = (image.labels or {}).get(BASE_LABEL, "")
        if label not in ("", base_image):
            continue
        try:
            # An image a container uses stays (removal without force refuses it): that is wanted.
            engine.client.images.remove(tag)
        except docker.errors.DockerException as err:
            log.warning("kept the sandbox image %s: %s", tag, str(err)[:200])
            continue
        removed.append(tag)
        log.info("removed the stale sandbox image %s (another build context on %s)", tag, base_image)
    return removed


def ensure_images(engine: Engine, base: str = "debootstrap", base_image: str = "debian:bookworm-slim",
                  mirror: str | None = None, prune_old: bool = False, copy_from: Engine | None = None) -> str:
    """The sandbox image tag, building what is missing. base: 'debootstrap' or 'registry'.
    prune_old: also remove sandbox images of other build contexts on the same base. copy_from:
    another engine on this machine to take the image from when it has it (Docker's, for Podman)."""
    if base == "debootstrap":
        base_image = LOCAL_BASE
    tag = context_tag(CONTEXT, base_image)
    if prune_old:  # before building: on vfs the old and the new image side by side need ~10 GB
        remove_stale_sandbox_images(tag, base_image, engine)
    if copy_from is not None and not image_exists(tag, engine) and image_exists(tag, copy_from):
        log.info("copying %s from %s to %s", tag, copy_from.name, engine.name)
        copy_image(tag, copy_from, engine)
    if not image_exists(tag, engine):
        if base == "debootstrap":
            build_debootstrap_base(engine, mirror or "http://deb.debian.org/debian")
        build_sandbox_image(base_image, engine)
    return tag
