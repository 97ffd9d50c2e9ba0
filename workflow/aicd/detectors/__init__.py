"""Detectors stage: one small class per detector family, registered by name.

Importing this package registers the built-in detector kinds (REGISTRY, aicd.detectors.base): its
`from . import ...` line names their modules (a new kind's module goes on it;
tests/unit/common/test_registry.py names one missing). The encoder module imports torch/transformers
only when an encoder is fitted. `python -m aicd.detectors` fits and applies them.

- base: the detector interface, its class attributes and the registry;
- dummy: Table 4's dummy baselines (seeded uniform random, majority class);
- classical: Table 4's LR, linear SVM and CatBoost over a feature set;
- linear: the linear models' building blocks at the paper's scale;
- fast_detectgpt: Fast-DetectGPT's sampling discrepancy of a causal LM;
- zero_shot_lm: the zero-shot panel, one criterion of a causal LM's token statistics per row;
- fused: LM criteria whose direction no training collection can turn, beside trained columns;
- encoder/: fine-tuned transformers encoders (the paper's §5.1);
- robust: a detector built for shift (unseen languages, generators, settings);
- robust_lm: the token statistics of a small causal code LM for `robust`;
- hf_classifier: a sequence classifier someone already fine-tuned, applied without training;
- plugins: detectors a user brings without editing the package (python object, predictions file);
- training: any detector's training options (perturbation augmentation, ...);
- validation: a validation split carved from train where a detector needs one;
- fitting: one detector fitted on a task's splits and its test split predicted;
- output_check: a detector's output checked in the job that makes it;
- novelty: how far a row lies from the rows a detector was trained on;
- bundle: a fitted model, everything needed to apply a detector to raw code;
- apply: a fitted model applied to code files (`aicd detect`)."""

from . import classical, dummy, encoder, fast_detectgpt, fused, hf_classifier, plugins, robust, zero_shot_lm  # noqa: F401  (registration)
from .base import REGISTRY, Detector, build, register  # noqa: F401
