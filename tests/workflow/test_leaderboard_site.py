"""The leaderboard site (`aicd leaderboard`) opened in a real headless Chromium: the ranking read
from the page's DOM matches the results files, and a screenshot is taken."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pandas as pd
from aicd.cli import main as aicd
from components import require

from workflow.browser import Page, chromium, evaluate, screenshot


def test_the_leaderboard_page_shows_the_ranking(tmp_path):
    binary = chromium()
    require(binary is not None, "headless Chromium", "apt-get install chromium-headless-shell (Debian)")
    rng = np.random.default_rng(0)
    n = 400
    gold = pd.DataFrame({"id": [f"t{i}" for i in range(n)], "label": rng.choice(["human", "machine"], n),
                         "subset": rng.choice(["seen", "unseen"], n)})
    gold.to_parquet(tmp_path / "gold.parquet")
    for name, accuracy in (("Beta", 0.7), ("Alpha", 0.9), ("Gamma", 0.55)):
        right = rng.random(n) < accuracy
        pred = np.where(right, gold["label"], np.where(gold["label"] == "human", "machine", "human"))
        pd.DataFrame({"id": gold["id"], "label": pred}).to_csv(tmp_path / f"{name}.csv", index=False)
        (tmp_path / f"{name}.yaml").write_text(json.dumps({"detector": name, "date": "2026-12-01",
                                                           "contact": "a@b.org", "links": [f"https://x.org/{name}"]}))
        assert aicd(["submission", "score", str(tmp_path / f"{name}.csv"), str(tmp_path / f"{name}.yaml"), "--gold",
                     str(tmp_path / "gold.parquet"), "--task", "T1", "--out", str(tmp_path / "board" / f"{name}.json"),
                     "--resamples", "200"]) == 0
    assert aicd(["leaderboard", str(tmp_path / "board"), "--out", str(tmp_path / "site"), "--resamples", "200"]) == 0
    page_file = tmp_path / "site" / "index.html"
    shot = tmp_path / "leaderboard.png"

    async def steps(call):
        await call("Page.enable")
        await call("Page.navigate", url=page_file.as_uri())
        for _ in range(50):
            if await evaluate(call, "document.querySelectorAll('table.board tbody tr').length"):
                break
            await asyncio.sleep(0.1)
        ranking = await evaluate(call, "[...document.querySelectorAll('table.board[data-task=\"T1\"] tbody tr')]"
                                       ".map(r => [r.cells[0].innerText, r.dataset.detector, r.cells[3].innerText,"
                                       " r.cells[r.cells.length - 1].innerText])")
        headers = await evaluate(call, "[...document.querySelectorAll('table.board th')].map(h => h.innerText)")
        await screenshot(call, shot)
        return ranking, headers

    with Page(binary, folder=tmp_path / "browser") as page:
        ranking, headers = page.run(steps)
    print(f"screenshot of the leaderboard: {shot}")
    data = json.loads((tmp_path / "site" / "leaderboard.json").read_text())["T1"]["entries"]
    assert [r[1] for r in ranking] == [e["detector"] for e in data] == ["Alpha", "Beta", "Gamma"]
    assert [r[0] for r in ranking] == ["1", "2", "3"]
    value = f"{data[0]['macro_f1'] * 100:.2f}"  # with its interval: ± where symmetric, else its ends
    assert ranking[0][2].startswith(f"{value} ± ") or ranking[0][2].startswith(f"{value} ["), ranking[0][2]
    assert ranking[0][3] == "leader" and "p = " in ranking[2][3]
    assert headers[:7] == ["Rank", "Detector", "Date", "Macro-F1", "AUROC", "TPR @ 1% FPR",
                           "val. threshold for 1%: TPR (test FPR)"] and "seen" in headers
    assert shot.stat().st_size > 5_000
