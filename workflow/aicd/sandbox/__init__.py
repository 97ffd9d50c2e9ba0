"""Sandbox stage: compile and run programs in long-lived, locked-down containers, on Docker or
Podman (`python -m aicd.sandbox`).

- engine: the container engine (Docker, or Podman rootless on a cluster) and what it can enforce;
- images: the optional debootstrap base and the sandbox image, tagged by their build context;
- isolation: what every container is given and denied, on each engine;
- masks: what a program is not shown of the host (paths masked in every container);
- limits: the sandbox's limits and the memory budget every cap must fit in;
- languages: how each of the nine languages is built, checked and run;
- owner: who made a container or a scratch folder, and whether that process is gone;
- pool: long-lived containers and the pool that runs programs in them;
- execute: a sample table's programs run in the pool, one result row per input row."""
