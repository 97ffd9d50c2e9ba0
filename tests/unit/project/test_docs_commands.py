"""Every command that README.md, DEVELOPERS.md, docs/, config/README.md, containers/README.md and the
Snakefile, config and profile headers show
runs as written: each is taken from the text (fenced blocks, inline code, `#   ` header lines)
and checked against the real parsers. A snakemake command must parse with snakemake's own
argument parser, name config files and profiles that exist, and its config files, merged in
order, must validate; an `aicd` command must parse with aicd's; a `make` target must exist; a
`python -m aicd.X` module must import. No command may need a flag the text leaves out."""

from __future__ import annotations

import importlib
import re
import shlex
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
TEXTS = [REPO / "README.md", REPO / "config" / "README.md", REPO / "DEVELOPERS.md", REPO / "containers" / "README.md",
         *sorted((REPO / "docs").glob("*.md"))]
HEADERS = [REPO / "Snakefile", *sorted((REPO / "config").glob("*.yaml")), *sorted((REPO / "profiles").glob("*/config.yaml")),
           *sorted((REPO / "docs" / "examples").glob("*.yaml"))]
STARTS = ("snakemake", "aicd", "make", "python -m aicd", "python3 -m aicd")
ENV = re.compile(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+")


# a usage summary (alternatives, placeholders such as COMMAND or =N), a list of names, not a command
USAGE = re.compile(r"[|<>…]|\.\.\.| / |--mode remote|=[A-Z]\b|^aicd [A-Z]+\b")


def normalise(line: str, inline: bool = False) -> str | None:
    """The command a line shows, without prompt, env assignments, venv path, comment or the
    description a listing puts after it; None for what is not a command."""
    line = line.strip().lstrip("$ ").strip()
    line = ENV.sub("", line)
    line = re.sub(r"^(?:\.venv/bin/|\$\(PY\) -m )", "", line)
    line = re.sub(r"\s+#\s.*$", "", line)
    line = re.sub(r"\s{2,}[a-z(].*$", "", line).strip()  # "aicd fetch-inputs   download and ..." listings
    if not line.startswith(STARTS) or USAGE.search(line):
        return None
    if inline and len(shlex.split(line)) <= (3 if line.startswith("python") else 2):
        return None  # a name in prose ("`aicd detect`"), not a command
    return line


def fenced(text: str) -> tuple[list[str], str]:
    """(the shell blocks' texts, the prose outside every fence): fences opened and closed in
    turn, so a yaml block's closing fence never opens a shell block."""
    blocks, prose, current, language = [], [], None, None
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            if current is None:
                current, language = [], line.strip()[3:].strip()
            else:
                if language in ("", "bash", "sh", "console"):
                    blocks.append("\n".join(current))
                current = None
            continue
        (prose if current is None else current).append(line)
    return blocks, "\n".join(prose)


def commands() -> list[tuple[str, str]]:
    """(where, command) of every command shown."""
    found = []
    for path in TEXTS:
        text = path.read_text()
        blocks, prose = fenced(text)
        for block in blocks:
            for line in re.sub(r"\s*\\\n\s*", " ", block).splitlines():  # continuation lines joined
                cmd = normalise(line)
                if cmd:
                    found.append((path.name, cmd))
        for span in re.findall(r"`([^`\n]+)`", prose):
            cmd = normalise(span, inline=True)
            if cmd:
                found.append((path.name, cmd))
    for path in HEADERS:
        for line in path.read_text().splitlines():
            m = re.match(r"^#\s{2,}(.*)$", line)
            cmd = normalise(m.group(1)) if m else None
            if cmd:
                found.append((f"{path.parent.name}/{path.name}", cmd))
    return sorted(set(found))


COMMANDS = commands()


def test_the_texts_show_the_commands_a_researcher_needs():
    shown = [c for _, c in COMMANDS]
    assert len(shown) > 40
    assert any(c.startswith("snakemake --cores 2 --configfile config/demo.yaml") for c in shown)
    assert any("--workflow-profile profiles/slurm --profile" in c for c in shown)


def _snakemake(cmd: str, where: str) -> None:
    from aicd.config import validate_config
    from snakemake.cli import get_argument_parser

    tokens = shlex.split(cmd)[1:]
    try:
        args = get_argument_parser().parse_args(tokens)
    except SystemExit:
        pytest.fail(f"{where}: `{cmd}` does not parse with snakemake's own parser")
    for profile in [*(args.profile or []), args.workflow_profile]:
        # the repository's profiles must exist; one of the reader's own (~/..., DIR) cannot be checked
        if profile and profile != "none" and not profile.startswith(("~", "/", "$")) and not re.search(r"[A-Z]{3}", profile):
            assert (REPO / profile).is_dir(), f"{where}: `{cmd}` names the profile {profile}, which does not exist"
    assert "workflow/profiles" not in cmd, f"{where}: `{cmd}` names the old profile folder"
    # a bare file name (mine.yaml, my_detector.yaml) is the reader's own file; a path must exist
    configs = [c for c in (args.configfile or []) if "/" in str(c)]
    merged: dict = {}
    for c in configs or ([] if args.configfile else ["config/config.yaml"]):
        path = REPO / c
        assert path.is_file(), f"{where}: `{cmd}` names the config file {c}, which does not exist"
        merged = _merge(merged, yaml.safe_load(path.read_text()) or {})
    if configs and ("tasks" in merged and "detectors" in merged):
        validate_config(merged)


def _merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


@pytest.mark.parametrize("where, cmd", COMMANDS, ids=[f"{w}: {c[:60]}" for w, c in COMMANDS])
def test_every_shown_command_runs_as_written(where, cmd):
    if cmd.startswith("snakemake"):
        _snakemake(cmd, where)
    elif cmd.startswith("aicd"):
        from aicd.cli import build_parser

        try:
            build_parser().parse_args(shlex.split(cmd)[1:])
        except SystemExit as exit_:
            assert exit_.code == 0, f"{where}: `{cmd}` does not parse with aicd's parser"
    elif cmd.startswith("make"):
        targets = set(re.findall(r"^([A-Za-z][\w-]*):", (REPO / "Makefile").read_text(), flags=re.M))
        for target in [t for t in shlex.split(cmd)[1:] if "=" not in t and not t.startswith("-")]:
            assert target in targets, f"{where}: `{cmd}`: the Makefile has no target {target}"
    else:
        module = shlex.split(cmd)[2]
        importlib.import_module(module if module != "aicd.report" else "aicd.report.__main__")
