"""Sandbox image housekeeping on a real engine (`make images` passes --prune-old): the
aicd-sandbox tags of other build contexts on the same base go (on vfs each holds ~5 GB;
leftovers filled this host's disk in CI), the current tag stays, and so does an image on another
base (the registry setup beside the debootstrap one)."""

import io

from aicd.sandbox.images import BASE_LABEL, LOCAL_BASE, image_exists, remove_stale_sandbox_images, sandbox_images
from sandbox_support import ONE_ENGINE


def stand_in(engine, parent: str, tag: str, base: str | None) -> None:
    """A label-only image on `parent`: with the sandbox's base label, or with an empty one, as
    images built before the label existed."""
    label = f'LABEL {BASE_LABEL}="{base or ""}"\n'
    engine.client.images.build(fileobj=io.BytesIO(f"FROM {parent}\n{label}".encode()), tag=tag, rm=True)


@ONE_ENGINE
def test_only_other_contexts_on_the_same_base_are_removed(engine, sandbox_image):
    same, unlabelled, other = ("aicd-sandbox:test-same-base", "aicd-sandbox:test-unlabelled",
                               "aicd-sandbox:test-other-base")
    # The small base where the engine has it: on vfs every build step copies its parent whole.
    parent = LOCAL_BASE if image_exists(LOCAL_BASE, engine) else sandbox_image
    stand_in(engine, parent, same, LOCAL_BASE)
    if parent == LOCAL_BASE:
        # An alias: the base carries no label. Tagged by name: Podman's compatible API cannot
        # tag an image named by its id (sha256:...), which the SDK's Image.tag sends.
        engine.client.api.tag(LOCAL_BASE, *unlabelled.split(":"))
    else:
        stand_in(engine, parent, unlabelled, None)
    stand_in(engine, parent, other, "debian:bookworm-slim")
    try:
        removed = remove_stale_sandbox_images(keep=sandbox_image, base_image=LOCAL_BASE, engine=engine)
        assert {same, unlabelled} <= set(removed)
        assert other not in removed
        tags = {tag for tag, _ in sandbox_images(engine)}
        assert sandbox_image in tags and other in tags
        assert not {same, unlabelled} & tags
        assert image_exists(parent, engine)  # an alias was untagged, the image itself stays
    finally:
        for tag in (same, unlabelled, other):
            try:
                engine.client.images.remove(tag)
            except Exception:
                pass
