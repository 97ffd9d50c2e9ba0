from aicd.report.table4 import Column, Row, latex_title, render

ROWS = [Row("random", "Random", True), Row("majority", "Majority", True),
        Row("svm", "SVM_{TF-IDF}", False), Row("cb", "CB_{AST & TF-IDF}", False)]
COLS = [Column("T1", "Task 1"), Column("T2", "Task 2")]


def test_latex_layout_bold_underline_and_not_run():
    scores = {("random", "T1"): 0.4573, ("majority", "T1"): 0.4383, ("svm", "T1"): 0.4305, ("cb", "T1"): 0.1802,
              ("random", "T2"): 0.0569, ("majority", "T2"): 0.0543, ("svm", "T2"): 0.0544}
    latex, md = render(ROWS, COLS, scores)
    assert "\\toprule" in latex and "\\midrule" in latex and "\\bottomrule" in latex
    assert "\\underline{45.73}" in latex          # random beats every trained model on T1
    assert "\\underline{43.83}" in latex
    assert "\\textbf{43.05}" in latex              # best trained on T1
    assert "\\underline{5.69}" in latex and "\\underline{5.43}" not in latex  # 5.43 < 5.44
    assert "\\textbf{5.44}" in latex
    cb_line = next(line for line in latex.splitlines() if line.strip().startswith("CB"))
    assert cb_line.rstrip(" \\").endswith("–")     # CB not run on T2
    assert "SVM${}_{\\text{TF-IDF}}$" in latex
    assert "**43.05**" in md and "<u>45.73</u>" in md and "SVM<sub>TF-IDF</sub>" in md


def test_latex_escapes_ampersand_in_titles():
    assert latex_title("CB_{AST & TF-IDF}") == "CB${}_{\\text{AST \\& TF-IDF}}$"


def test_ties_for_best_are_all_bold():
    latex, _ = render(ROWS[2:], COLS[:1], {("svm", "T1"): 0.5, ("cb", "T1"): 0.5})
    assert latex.count("\\textbf{50.00}") == 2


def test_intervals_print_half_width_only_where_given_and_symmetric():
    scores = {("svm", "T1"): 0.5, ("cb", "T1"): 0.4}
    latex, md = render(ROWS[2:], COLS[:1], scores, intervals={("svm", "T1"): (0.477, 0.523)})
    assert "**50.00 ± 2.30**" in md                # half of 4.60 points
    assert "\\textbf{50.00 $\\pm$ 2.30}" in latex
    _, lopsided = render(ROWS[2:], COLS[:1], scores, intervals={("svm", "T1"): (0.48, 0.5260)})
    assert "**50.00 [48.00, 52.60]**" in lopsided and "±" not in lopsided.split("\n\n")[0]  # no ± hides it
    cb_line = next(line for line in md.splitlines() if line.startswith("| CB"))
    assert "40.00" in cb_line and "±" not in cb_line
