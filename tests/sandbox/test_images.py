"""Sandbox image housekeeping on the real Docker daemon (`make images` passes --prune-old): the
aicd-sandbox tags of other build contexts on the same base go (on vfs each holds ~5 GB; leftovers
filled this host's disk in CI), the current tag stays, and so does an image on another base
(the registry setup beside the debootstrap one)."""

from components import require

from aicd.sandbox.images import BASE_LABEL, LOCAL_BASE, image_exists, remove_stale_sandbox_images
from aicd.sandbox.pool import docker


def sandbox_tags() -> set[str]:
    listed = docker("images", "--format", "{{.Repository}}:{{.Tag}}", "aicd-sandbox", timeout=60)
    return set(listed.stdout.split())


def labelled(tag: str, base: str) -> None:
    """A tiny image on the local base carrying the sandbox's base label (no filesystem layer)."""
    proc = docker("build", "--force-rm", "-q", "-t", tag, "-", timeout=600,
                  input=f"FROM {LOCAL_BASE}\nLABEL {BASE_LABEL}={base}\n")
    assert proc.returncode == 0, proc.stderr


def test_only_other_contexts_on_the_same_base_are_removed(sandbox_image):
    require(image_exists(LOCAL_BASE), f"the base image {LOCAL_BASE} (stand-in images are made from it)",
            "python -m aicd.sandbox images")
    same, unlabelled, other = ("aicd-sandbox:test-same-base", "aicd-sandbox:test-unlabelled",
                               "aicd-sandbox:test-other-base")
    labelled(same, LOCAL_BASE)
    labelled(other, "debian:bookworm-slim")
    assert docker("tag", LOCAL_BASE, unlabelled, timeout=60).returncode == 0  # built before labels
    try:
        removed = remove_stale_sandbox_images(keep=sandbox_image, base_image=LOCAL_BASE)
        assert {same, unlabelled} <= set(removed)
        assert other not in removed
        tags = sandbox_tags()
        assert sandbox_image in tags and other in tags
        assert not {same, unlabelled} & tags
        assert image_exists(LOCAL_BASE)  # an alias was untagged, the base itself stays
    finally:
        for tag in (same, unlabelled, other):
            docker("rmi", tag, timeout=60)
