"""Pinned inputs, input fingerprints and `aicd verify`, without snakemake."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile

import pytest
from aicd.cli import main as aicd_main
from aicd.common.errors import AicdError
from aicd.records.fingerprint import collect, diff_inputs, digest, verify
from aicd.sources import pinned
from aicd.sources.gather import gather

GO = ("package main\n\nfunc main() {\n" + "\n".join(f"\tx{i} := {i}\n\t_ = x{i}" for i in range(5)) + "\n}\n").encode()


def _deb(path, files: dict[str, bytes]) -> str:
    """A minimal Debian package: an ar archive holding data.tar.gz."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    members = [(b"debian-binary", b"2.0\n"), (b"data.tar.gz", buf.getvalue())]
    out = b"!<arch>\n"
    for name, data in members:
        out += name.ljust(16) + b"0".ljust(12) + b"0".ljust(6) + b"0".ljust(6) + b"100644".ljust(8) \
            + str(len(data)).encode().ljust(10) + b"`\n" + data + (b"\n" if len(data) % 2 else b"")
    path.write_bytes(out)
    return hashlib.sha256(out).hexdigest()


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AICD_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cache" / "pinned").mkdir(parents=True)
    return tmp_path / "cache" / "pinned"


def test_gather_reads_a_pinned_deb_from_the_cache_and_records_its_hash(cache):
    sha = _deb(cache / "go-pkg_1.0_all.deb", {"./usr/share/gocode/src/x/main.go": GO})
    pins = {"gopkg": {"registry": "debian", "version": "1.0", "file": "go-pkg_1.0_all.deb", "sha256": sha, "url": "u"}}
    spec = {"roots": {"Go": ["pinned:gopkg"]}, "per_language": 3, "pinned": pins, "pinned_only": True}
    rows, report = gather(spec, seed=1)
    assert list(rows["language"]) == ["Go"]
    assert rows["path"][0] == "gopkg@1.0!./usr/share/gocode/src/x/main.go#0"  # no machine path in the rows
    assert report["inputs"]["package:gopkg"]["sha256"] == sha
    assert report["languages_short"] == {"Go": 1}
    info = collect({"local_code": {"gather": report, "inputs": report["inputs"]}})  # as the source report holds it
    assert info["warnings"] == ["source local_code: fewer rows than asked for (3 per language): Go 1"]


def test_a_missing_or_altered_pinned_input_stops_with_one_line_naming_it(cache):
    pins = {"gopkg": {"registry": "debian", "version": "1.0", "file": "go-pkg_1.0_all.deb", "sha256": "0" * 64,
                      "url": "http://example.invalid/go-pkg_1.0_all.deb"}}
    spec = {"roots": {"Go": ["pinned:gopkg"]}, "pinned": pins}
    with pytest.raises(AicdError, match=r"pinned input gopkg 1.0 \(debian\) is not in .*: run `make pinned-inputs`"):
        gather(spec, seed=1)
    (cache / "go-pkg_1.0_all.deb").write_bytes(b"changed")
    with pytest.raises(AicdError, match="has sha256 .* expected 0000"):
        gather(spec, seed=1)


def test_pinned_only_refuses_a_root_on_this_machine(tmp_path):
    with pytest.raises(AicdError, match="not a pinned input, and pinned_only"):
        gather({"roots": {"Go": [str(tmp_path)]}, "pinned_only": True, "pinned": {}}, seed=1)


def test_an_unpinned_root_is_fingerprinted_and_warned_about(tmp_path):
    (tmp_path / "main.go").write_bytes(GO)
    _, report = gather({"roots": {"Go": [str(tmp_path)]}, "per_language": 1}, seed=1)
    rec = report["inputs"]["installed:Go"]
    assert rec["files_read"] == 1 and len(rec["sha256"]) == 64
    assert "not from pinned inputs" in collect({"s": {"gather": report, "inputs": report["inputs"]}})["warnings"][-1]


def test_the_demo_roots_name_only_pinned_inputs_of_the_manifest(repo):
    import yaml

    manifest = pinned.load_manifest()
    gather_spec = yaml.safe_load((repo / "config" / "demo.yaml").read_text())["sources"]["local_code"]["gather"]
    assert gather_spec["pinned_only"] is True
    pins = pinned.pins_for(gather_spec["roots"], manifest)
    assert set(pins) <= set(manifest)
    assert all(len(e["sha256"]) == 64 and e["registry"] in {"pypi", "npm", "debian"} for e in manifest.values())
    with pytest.raises(AicdError, match="not in the pinned inputs manifest"):
        pinned.pins_for({"Go": ["pinned:nope"]}, manifest)


def test_fingerprint_follows_content_not_paths_and_diff_names_the_input():
    a = {"source:trial/file:t.parquet": {"kind": "file", "path": "/a/t.parquet", "sha256": "1" * 64}}
    b = {"source:trial/file:t.parquet": {"kind": "file", "path": "/elsewhere/t.parquet", "sha256": "1" * 64}}
    assert digest(a) == digest(b)
    c = {"source:trial/file:t.parquet": {"kind": "file", "path": "/a/t.parquet", "sha256": "2" * 64}}
    assert digest(a) != digest(c)
    lines = diff_inputs({"inputs": a, "code": "v1"}, {"inputs": c, "code": "v1"})
    assert len(lines) == 1 and lines[0].startswith("differs: A source:trial/file:t.parquet")


def _tree(root, fingerprint="abc", table="x", code="v1"):
    (root / "tables").mkdir(parents=True)
    (root / "scores" / "binary").mkdir(parents=True)
    (root / "inputs.json").write_text(json.dumps({"fingerprint": fingerprint, "code": code, "inputs": {
        "source:trial/file:t.parquet": {"sha256": fingerprint * 10}}}))
    (root / "tables" / "table4.tex").write_text(table)
    (root / "scores" / "binary" / "lr.json").write_text("{}")
    (root / "figures").mkdir()
    (root / "figures" / "confusion_binary.png").write_bytes(b"\x89PNG same")
    (root / "logs").mkdir()
    (root / "logs" / "score.log").write_text(f"took {len(str(root))} s")  # differs between the trees: not compared
    return root


def test_verify_identical_different_files_and_different_inputs(tmp_path, capsys):
    a = _tree(tmp_path / "a" / "results")
    ok, lines = verify(tmp_path / "a", _tree(tmp_path / "b"))
    assert ok and lines[-2] == "identical: 3 tables, score files, figures and reports byte for byte"
    assert lines[-1].startswith("not compared: logs/ and benchmarks/")
    ok, lines = verify(a, _tree(tmp_path / "c", table="y"))
    assert not ok and "differs: tables/table4.tex" in lines
    ok, lines = verify(a, _tree(tmp_path / "d", fingerprint="def"))
    assert not ok and any(line.startswith("differs: A source:trial/file:t.parquet") for line in lines)
    ok, lines = verify(a, _tree(tmp_path / "e", code="v2"))  # the same inputs before and after a code change
    assert ok and "same inputs, different code (A v1 / B v2)" in lines[0]
    ok, lines = verify(a, _tree(tmp_path / "f", code="v2", table="y"))
    assert not ok and "differs: tables/table4.tex" in lines
    assert aicd_main(["verify", str(a), str(tmp_path / "b")]) == 0
    assert aicd_main(["verify", str(a), str(tmp_path / "d")]) == 1
    assert aicd_main(["verify", str(a), str(tmp_path / "nothing")]) == 2
    assert "error:" in capsys.readouterr().err


FIGURE = """
import sys
import matplotlib.pyplot as plt
from aicd.report.figures import write_figure
fig, ax = plt.subplots()
ax.bar(["a", "b"], [1, 2])
ax.set_title("same inputs, same bytes")
write_figure(fig, sys.argv[1] + ".pdf", sys.argv[1] + ".png")
"""


def test_figures_are_the_same_bytes_in_two_processes(tmp_path):
    import subprocess
    import sys
    import time

    for name in ("one", "two"):
        subprocess.run([sys.executable, "-c", FIGURE, str(tmp_path / name)], check=True)
        time.sleep(1.1)  # a PDF creation date would differ by then
    for suffix in (".pdf", ".png"):
        one, two = (tmp_path / f"one{suffix}").read_bytes(), (tmp_path / f"two{suffix}").read_bytes()
        assert len(one) > 1000 and one == two, suffix
    assert b"CreationDate" not in (tmp_path / "one.pdf").read_bytes()
