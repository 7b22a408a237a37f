"""Access by grade: which actions an agent may take at its current standing. Pure — no I/O.

A policy file (YAML, TOML or JSON) maps agents or grades to allowed actions and
manual-approval needs, in the shape of the article's ``AGENT_GRADE_POLICY``::

    default: deny                 # agents and grades no rule covers: deny (default) or allow
    unrated_grade: Matruk         # the grade of an agent with no standing yet
    agents:
      weather-agent-v1:
        grade: Saduq              # the lowest grade at which the rule grants anything
        allowed_actions: [query_weather, query_express]
        need_manual_approval: true
        risk_level: medium
    grades:
      Thiqah: {allowed_actions: ["*"]}
      Saduq: {allowed_actions: [search, summarize], need_manual_approval: true}

An agent named under ``agents`` is judged by its own rule only. Any other agent is
judged by the rule of its current grade; a grade without a rule gets ``default``.
Actions are tool names (or any name the app checks), matched as shell-style patterns
(``*``, ``db.*``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from otel_reliability.reputation.scoring import Grade


class Rule(BaseModel):
    """What an agent (or any agent at a grade) may do."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    grade: Grade | None = None  # agent rules only: the lowest grade at which the rule grants anything
    allowed_actions: list[str] = Field(default_factory=list)
    need_manual_approval: bool = False
    risk_level: str | None = None

    @field_validator("grade", mode="before")
    @classmethod
    def _grade(cls, value: object) -> object:
        return Grade.parse(value) if isinstance(value, str) else value

    def allows(self, action: str) -> bool:
        return any(fnmatchcase(action, pattern) for pattern in self.allowed_actions)


class AccessPolicy(BaseModel):
    """Grade-based access rules.

    >>> policy = AccessPolicy(grades={"Thiqah": Rule(allowed_actions=["*"])})
    >>> policy.decide("search-agent", "search", Grade.THIQAH).allowed
    True
    >>> policy.decide("search-agent", "search", Grade.SADUQ).reason
    "grade Saduq has no rule; the policy's default is deny (Thiqah or better may search)"
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    default: Literal["allow", "deny"] = "deny"
    unrated_grade: Grade = Grade.MATRUK
    agents: dict[str, Rule] = Field(default_factory=dict)
    grades: dict[Grade, Rule] = Field(default_factory=dict)

    @field_validator("unrated_grade", mode="before")
    @classmethod
    def _unrated(cls, value: object) -> object:
        return Grade.parse(value) if isinstance(value, str) else value

    @field_validator("grades", mode="before")
    @classmethod
    def _grade_keys(cls, value: object) -> object:
        if isinstance(value, dict):
            return {Grade.parse(k) if isinstance(k, str) else k: v for k, v in value.items()}
        return value

    def decide(self, agent: str, action: str, grade: Grade | None) -> Decision:
        """The decision for ``agent`` taking ``action`` at ``grade`` (``None``: not rated yet)."""
        rated = grade is not None
        current = grade if grade is not None else self.unrated_grade
        shown = current.value if rated else f"{current.value} (unrated)"
        rule = self.agents.get(agent)
        if rule is not None:
            required = rule.grade
            if not rule.allows(action):
                return Decision(agent, action, current, required, False, False, f"{action} is not among {agent}'s allowed actions", rule.risk_level)
            if required is not None and current.rank < required.rank:
                reason = f"grade {shown} is below the {required.value} {agent} needs"
                return Decision(agent, action, current, required, False, False, reason, rule.risk_level)
            reason = f"{agent} may {action} at grade {shown}"
            return Decision(agent, action, current, required, True, rule.need_manual_approval, reason, rule.risk_level)
        required = self._lowest_grade_allowing(action)
        rule = self.grades.get(current)
        if rule is None:
            allowed = self.default == "allow"
            reason = f"grade {shown} has no rule; the policy's default is {self.default}"
            if not allowed and required is not None:
                reason += f" ({required.value} or better may {action})"
            return Decision(agent, action, current, required, allowed, False, reason)
        if not rule.allows(action):
            reason = f"grade {shown} may not {action}"
            if required is not None:
                reason += f" ({required.value} or better may)"
            return Decision(agent, action, current, required, False, False, reason, rule.risk_level)
        reason = f"grade {shown} may {action}"
        return Decision(agent, action, current, required, True, rule.need_manual_approval, reason, rule.risk_level)

    def _lowest_grade_allowing(self, action: str) -> Grade | None:
        allowing = [g for g, rule in self.grades.items() if rule.allows(action)]
        return min(allowing, key=lambda g: g.rank) if allowing else None


@dataclass(slots=True, frozen=True)
class Decision:
    """The answer of ``check_permission``: allowed or not, and whether a human must approve."""

    agent: str
    action: str
    grade: Grade
    required: Grade | None
    allowed: bool
    needs_approval: bool
    reason: str
    risk_level: str | None = None

    def __bool__(self) -> bool:
        """True when the action may go ahead without asking anyone."""
        return self.allowed and not self.needs_approval


class PermissionDenied(PermissionError):
    """Raised by a guarded call the policy does not allow; ``decision`` says why."""

    def __init__(self, decision: Decision) -> None:
        super().__init__(f"{decision.agent} may not {decision.action}: {decision.reason}")
        self.decision = decision
