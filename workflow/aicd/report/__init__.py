"""Reporting stage: results/report.md, the paper's Tables 4-8, the reproduction table, figures
and cards (`python -m aicd.report SUBCOMMAND`, one subcommand per output).

- layouts: what each report job is told of the plan;
- report_md: results/report.md, Table 4 beside the threshold metrics and confusion figures;
- table4: Table 4 of the paper (rows: detectors, columns: tasks);
- threshold_table: the threshold metrics beside Table 4;
- calibrated_view: the calibrated view beside Table 4 (per-language thresholds set on human reference
  code, and the column adapted to the unlabelled test set);
- subset_tables: Tables 5-7, a value per evaluation subset;
- llm_tables: Table 8 (LLM judges) and the generation report;
- reproduction: the paper's published numbers beside ours;
- reproduction_figure: the same for one task, as paired bars;
- paper_section: results/paper_results.md, one sentence per later table and figure;
- paper_figures: the paper's figures;
- ood: the out-of-distribution table;
- loco: the leave-one-collection-out table (mean and worst over held-out collections);
- analyses: the paper's analyses per task (SVM coefficients, SHAP, ...);
- data_block: the report's opening block on what the data are;
- subsets: the report's test-subset section;
- test_sets: the report's lines on extra test sets;
- card: the dataset card (results/dataset/README.md);
- generator_card: one generator model's card;
- generation_losses: a generator's skipped prompts and dropped rows, by stage, an example each;
- execution: sandbox execution status counts and pass rates;
- leaderboard: a static leaderboard site from submission results;
- marks: the marks on numbers that are not what their header suggests;
- intervals: an interval printed as it is;
- latex: the one LaTeX escape of every table;
- figures: the confusion-matrix figure, and the one writer of every figure."""
