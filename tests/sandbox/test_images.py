"""Sandbox image housekeeping on the real Docker daemon: a new build removes the aicd-sandbox
tags of older build contexts (on vfs each holds ~5 GB; leftovers filled this host's disk in CI)
and keeps the current one."""

from aicd.sandbox.images import LOCAL_BASE, remove_stale_sandbox_images
from aicd.sandbox.pool import docker


def sandbox_tags() -> set[str]:
    listed = docker("images", "--format", "{{.Repository}}:{{.Tag}}", "aicd-sandbox", timeout=60)
    return set(listed.stdout.split())


def test_stale_sandbox_tags_are_removed_and_the_current_one_kept(sandbox_image):
    # Tags of the small base image stand in for stale builds: tagging copies nothing.
    stale = ["aicd-sandbox:stale0000001", "aicd-sandbox:stale0000002"]
    for tag in stale:
        assert docker("tag", LOCAL_BASE, tag, timeout=60).returncode == 0
    try:
        removed = remove_stale_sandbox_images(keep=sandbox_image)
        assert set(stale) <= set(removed)
        tags = sandbox_tags()
        assert sandbox_image in tags
        assert not set(stale) & tags
        assert docker("image", "inspect", LOCAL_BASE, timeout=60).returncode == 0  # untagged, not deleted
    finally:
        for tag in stale:
            docker("rmi", tag, timeout=60)
