"""The reputation's typed configuration, validated by pydantic, from YAML, TOML or JSON.

::

    weights: {sidq: 0.3, dabt: 0.2, isnad: 0.3, adalah: 0.2}   # the article's, the default
    window: 100                       # an agent's standing covers its last 100 evaluations
    missing_dimension: zero           # or renormalize
    evaluator_confidence: 0.7         # gen_ai.evaluation.result events by evaluators not listed
    evaluators:
      human_review: {confidence: 1.0}
      toxicity: {dimension: adalah, confidence: 0.8}
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, Literal, cast

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from otel_reliability.input_errors import validation_problems, yaml_problem
from otel_reliability.reputation.evidence import DIMENSIONS
from otel_reliability.reputation.scoring import DEFAULT_WEIGHTS

Dimension = Literal["sidq", "dabt", "isnad", "adalah"]


class EvaluatorRule(BaseModel):
    """How one external evaluator's ``gen_ai.evaluation.result`` events count."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dimension: Dimension = "sidq"
    confidence: float = Field(default=0.7, gt=0.0, le=1.0)


class ReputationConfig(BaseModel):
    """Weights, window, the missing-dimension rule, and the confidence of each evidence source.

    >>> ReputationConfig().window, ReputationConfig().weights["isnad"]
    (100, 0.3)
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    weights: dict[Dimension, float] = Field(
        default_factory=lambda: {cast(Dimension, dimension): weight for dimension, weight in DEFAULT_WEIGHTS.items()}
    )
    window: int = Field(default=100, ge=1)
    missing_dimension: Literal["zero", "renormalize"] = "zero"
    fact_confidence: float = Field(default=1.0, gt=0.0, le=1.0)
    feedback_confidence: float = Field(default=1.0, gt=0.0, le=1.0)
    evaluator_confidence: float = Field(default=0.7, gt=0.0, le=1.0)
    evaluator_dimension: Dimension = "sidq"
    evaluators: dict[str, EvaluatorRule] = Field(default_factory=dict)
    evaluation_pass_threshold: float = 0.5

    @field_validator("weights")
    @classmethod
    def _weights(cls, weights: dict[str, float]) -> dict[str, float]:
        if any(w < 0 for w in weights.values()):
            raise ValueError("weights must not be negative")
        full = {d: float(weights.get(d, 0.0)) for d in DIMENSIONS}
        if sum(full.values()) <= 0:
            raise ValueError("at least one weight must be positive")
        return full

    def evaluator(self, name: str) -> EvaluatorRule:
        """The rule for an evaluator, the defaults for one not listed."""
        rule = self.evaluators.get(name)
        if rule is None:
            return EvaluatorRule(dimension=self.evaluator_dimension, confidence=self.evaluator_confidence)
        return rule


class ConfigError(ValueError):
    """A reputation config or policy file is invalid; the message names where."""


def read_document(path: str | Path) -> Any:
    """A YAML, TOML or JSON file's data, by extension."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    suffix = path.suffix.lower()
    try:
        if suffix in (".yaml", ".yml"):
            return yaml.safe_load(text)
        if suffix == ".toml":
            return tomllib.loads(text)
        if suffix == ".json":
            return json.loads(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {yaml_problem(exc)}") from exc
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not valid {suffix.lstrip('.').upper()}: {exc}") from exc
    raise ConfigError(f"{path}: unknown file type {suffix!r} (use .yaml, .yml, .toml or .json)")


def validate_file(model: type[BaseModel], path: str | Path) -> Any:
    """Read ``path`` and validate it as ``model``, naming the file and field on error."""
    data = read_document(path)
    try:
        return model.model_validate(data or {})
    except ValidationError as exc:
        raise ConfigError(f"{path}: {validation_problems(exc)}") from exc


def load_config(source: ReputationConfig | str | Path | None) -> ReputationConfig:
    """A config as given, read from a file, or the defaults for ``None``."""
    if source is None:
        return ReputationConfig()
    if isinstance(source, ReputationConfig):
        return source
    return validate_file(ReputationConfig, source)
