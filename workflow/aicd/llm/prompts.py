"""Versioned prompt templates (config/prompts/*.vN.yaml)."""

from __future__ import annotations

from pathlib import Path

import yaml

from ..common.errors import AicdError


class PromptSet:
    def __init__(self, path: str | Path):
        try:
            data = yaml.safe_load(Path(path).read_text())
        except (OSError, yaml.YAMLError) as err:
            raise AicdError(f"cannot read prompts {path}: {err}") from None
        self.version = data["version"]
        self.prompts = data["prompts"]
        self.extra = {k: v for k, v in data.items() if k not in ("version", "prompts")}

    def prompt_id(self, name: str) -> str:
        return f"{name}@{self.version}"

    def answer(self, name: str) -> str:
        """What a prompt's answer is: "program" (the default), or "continuation" (the rest of a
        program whose beginning the prompt gave: the row's code is that beginning followed by it)."""
        return str((self.prompts.get(name) or {}).get("answer", "program"))

    def messages(self, name: str, **fields) -> list[dict]:
        if name not in self.prompts:
            raise AicdError(f"no prompt named {name!r} (have: {', '.join(self.prompts)})")
        spec = self.prompts[name]
        try:
            out = [{"role": "system", "content": spec["system"].format(**fields)}] if spec.get("system") else []
            out.append({"role": "user", "content": spec["user"].format(**fields).strip()})
        except KeyError as err:
            raise AicdError(f"prompt {name!r} needs field {err} which was not given") from None
        return out
