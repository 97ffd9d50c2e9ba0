"""The plan: every job family the workflow runs, as a pure function of the validated config,
the model registry and the one recorded resolution of the machine (aicd.resolve). It does no
I/O, so the same inputs give the same plan on every node, and tests check it directly.

Detector kinds and feature kinds declare what the plan needs (aicd.detectors.base.Traits,
aicd.features.base): how a fitted model is stored, its threads, environment, GPUs and memory,
whether it is zero-shot, a dummy baseline or scored on binarised labels, what the analyses read
from it, and files other jobs make for it. Each decision is made once: a detector's job in a
DetectorPlan, a feature set's job in a FeaturePlan, who writes code under which protocols in a
GenerationPlan; the rules (workflow/rules/common.smk) and every list built on the plan (the
GPU jobs, the notes) read them from there. No rule names a kind or a feature set.

Names: a "pair" is one Table 4 cell (task, detector); "judge detectors" are the LLM judges'
prediction names (aicd.published.judge_detector).

- core: the Plan and the queries the rules and the reports make of it;
- jobs: a task's tables, a feature set's job and a detector's jobs, and their builders;
- generation: the LLM and sandbox stages' plan, and the lines that say what is left out;
- resources: the one table of job resources every rule reads;
- files: the rules' input builders (RunFiles), pure functions of the plan and the run's roots."""

from __future__ import annotations

from .core import Plan
from .generation import GenerationPlan, generation_plan
from .jobs import SPLITS, DetectorPlan, FeaturePlan, TaskPlan, feature_plan, mode_of
from .resources import JobResources

__all__ = ["SPLITS", "DetectorPlan", "FeaturePlan", "GenerationPlan", "JobResources", "Plan", "TaskPlan",
           "feature_plan", "generation_plan", "mode_of"]
