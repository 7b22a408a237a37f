"""The receiver's settings: defaults, then a YAML file, then ``OTEL_RELIABILITY_*`` environment
variables, then command-line flags — each overriding the one before.

```yaml
grpc_endpoint: 127.0.0.1:4317   # the default, as the Collector's OTLP receiver; 0.0.0.0 to listen on every interface
http_endpoint: 127.0.0.1:4318
store: otel-reliability.db
expectations: [expectations.yaml]
decision_wait: 2.0
```
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, Mapping

import yaml
from pydantic import ConfigDict, Field, ValidationError, field_validator

from ..engine import EngineSettings
from ..input_errors import validation_problems, yaml_problem
from ..stores.spec import StoreSpecError, parse_store_spec
from ..textfile import NotUtf8Error, read_text


class ConfigError(ValueError):
    """Settings that cannot be used; the message names the setting and where it came from."""


class ReceiverConfig(EngineSettings):
    """Every setting of ``otel-reliability serve``: the engine's bounds (``EngineSettings``, the
    same as the span processor's) and the receiver's own."""

    model_config = ConfigDict(extra="forbid", frozen=False)

    # Localhost by default, as the Collector's OTLP receiver (SPEC §10): no auth is set by
    # default, so reaching other hosts is an explicit choice (0.0.0.0, e.g. in a container).
    grpc_endpoint: str | None = Field("127.0.0.1:4317", description="HOST:PORT for OTLP/gRPC; empty to disable")
    http_endpoint: str | None = Field(
        "127.0.0.1:4318", description="HOST:PORT for OTLP/HTTP and the results API, /metrics, /healthz"
    )
    store: str = Field(
        "otel-reliability.db",
        description="results store: a SQLite file (.jsonl for JSON Lines), sqlite:///PATH, or a postgresql:// URL "
        "that several receivers share (with the paused runs they judged)",
    )
    expectations: list[str] = Field(default_factory=list, description="expectation files (YAML, TOML, JSON)")
    conventions: list[str] = Field(
        default_factory=list, description="convention files of your own tracing SDK (YAML; docs/conventions.md), "
        "tried before the shipped ones",
    )
    decision_wait: float = Field(2.0, gt=0, description="seconds a trace must be quiet before it is judged")
    max_buffered_spans: int = Field(
        1_000_000, ge=1, description="spans buffered in all; beyond it requests get RESOURCE_EXHAUSTED / HTTP 503"
    )
    durability: Literal["none", "batch", "always"] = Field(
        "batch",
        description="when an acknowledged request is on disk (the intake log, replayed after a crash): batch — before "
        "its answer, one fsync for every request that arrived meanwhile; always — one fsync per request; none — "
        "kept in memory only, lost on a crash",
    )
    intake_dir: str | None = Field(
        None,
        description="directory of the intake log: beside the store by default (STORE.intake/); a postgresql:// "
        "store has no local directory: without intake_dir its receiver keeps no log (durability none, logged at start)",
    )
    mkdir: bool = Field(
        False, description="create the missing folders of store and intake_dir (without it, a missing folder is an error)"
    )
    max_intake_log_bytes: int = Field(
        1024 * 1024 * 1024, ge=1024 * 1024,
        description="intake log size at most (across workers; on disk, twice the default max_buffered_bytes: "
        "segments leave oldest first, so the log holds more than the buffer); when full, requests get "
        "RESOURCE_EXHAUSTED / HTTP 503",
    )
    workers: int = Field(
        1, ge=1, le=64, description="processes that judge traces, each taking a share by trace id: one per CPU core to give the receiver"
    )
    max_request_bytes: int = Field(16 * 1024 * 1024, ge=1024, description="largest request body accepted")
    max_decompressed_bytes: int = Field(64 * 1024 * 1024, ge=1024, description="largest payload after gunzip")
    max_inflight_bytes: int | None = Field(
        None, ge=1024 * 1024,
        description="bytes requests may take while decoded, all at once (5 per byte of body); beyond it requests "
        "are refused with a retry delay; default a quarter of max_buffered_bytes",
    )
    auth_token: str | None = Field(
        None, description="bearer token required on OTLP, /api/v1/* and (see metrics_auth) /metrics; /healthz stays open"
    )
    metrics_auth: bool = Field(
        True, description="with auth_token set, /metrics asks for it too; false leaves /metrics open to scrapers"
    )
    header_timeout: float = Field(
        30.0, gt=0,
        description="seconds an HTTP client has to send a request's headers, from connecting or from its previous "
        "response (an idle keep-alive connection is closed after it as well)",
    )
    body_timeout: float = Field(
        60.0, gt=0, description="seconds an HTTP client has to send a request body; a slower one gets 408"
    )
    tls_cert: str | None = Field(None, description="PEM certificate file: serve gRPC and HTTP over TLS")
    tls_key: str | None = Field(None, description="PEM private key file for tls_cert")
    retry_after: int = Field(
        5, ge=1, description="seconds clients are told to wait when the receiver is full (at the soft byte limit: "
        "until judged traces leaving make room, if that is longer)",
    )
    reputation: bool = Field(True, description="keep each agent's reputation standing (served at /api/v1/reputation)")
    reputation_store: str | None = Field(
        None, description="where standings live: the results store by default, or a postgresql:// URL to share them"
    )
    metrics_endpoint: str | None = Field(
        None, description="OTLP/HTTP URL (…/v1/metrics) the metrics are also pushed to, every metrics_interval seconds"
    )
    metrics_interval: float = Field(15.0, gt=0, description="seconds between metric pushes to metrics_endpoint")
    forward_endpoint: str | None = Field(
        None, description="OTLP/HTTP URL (…/v1/traces) that receives every span, run spans with their verdict"
    )
    forward_headers: dict[str, str] = Field(default_factory=dict, description="headers sent with forwarded requests")
    forward_queue_size: int = Field(1_000, ge=1, description="forwarded requests queued at most; more are counted and dropped")

    @field_validator("forward_endpoint", "metrics_endpoint")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(f"expected an http:// or https:// URL, got {value!r}")
        return value or None

    @field_validator("store")
    @classmethod
    def _store(cls, value: str) -> str:
        parse_store_spec(value, "results")  # a StoreSpecError names the spec
        return value

    @field_validator("auth_token")
    @classmethod
    def _token(cls, value: str | None) -> str | None:
        if not value:
            return None
        if not value.isascii() or not value.isprintable() or " " in value:
            raise ValueError("the bearer token must be printable ASCII without spaces (it travels in a header)")
        return value

    @field_validator("grpc_endpoint", "http_endpoint")
    @classmethod
    def _host_port(cls, value: str | None) -> str | None:
        if not value:
            return None
        host, sep, port = value.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
            raise ValueError(f"expected HOST:PORT, got {value!r}")
        return value

    def intake_directory(self) -> Path | None:
        """Where the intake log lives; None when there is none (``durability: none``, a store
        in memory — its verdicts do not outlive the process either — or a PostgreSQL store
        without ``intake_dir``)."""
        if self.durability == "none":
            return None
        if self.intake_dir:
            return Path(self.intake_dir)
        spec = parse_store_spec(self.store, "results")
        if spec.in_memory or spec.path is None:
            return None
        return spec.path.with_name(spec.path.name + ".intake")

    def inflight_limit(self) -> int:
        """``max_inflight_bytes``, or its default: a quarter of ``max_buffered_bytes``."""
        return self.max_inflight_bytes or self.max_buffered_bytes // 4

    def engine_settings(self) -> EngineSettings:
        return EngineSettings(**{name: getattr(self, name) for name in EngineSettings.model_fields})

    def model_post_init(self, _context: Any) -> None:
        if self.reputation:
            try:
                parse_store_spec(self.reputation_store or self.store, "standings")
            except StoreSpecError as exc:
                hint = "" if self.reputation_store else " (set reputation_store, or reputation: false)"
                raise ConfigError(f"reputation_store: {exc}{hint}") from None
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ConfigError("tls_cert and tls_key must be given together")
        for name in ("tls_cert", "tls_key"):
            path = getattr(self, name)
            if path is not None and not os.access(path, os.R_OK):
                raise ConfigError(f"{name}: cannot read {path}")


ENV_PREFIX = "OTEL_RELIABILITY_"


def load_config(path: str | Path | None, overrides: Mapping[str, Any], environ: Mapping[str, str] = os.environ) -> ReceiverConfig:
    """Defaults < file < environment < ``overrides`` (flags given on the command line)."""
    values: dict[str, Any] = {}
    if path is not None:
        try:
            loaded = yaml.safe_load(read_text(path)) or {}
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read config file: {exc.strerror or exc}") from exc
        except NotUtf8Error as exc:
            raise ConfigError(str(exc)) from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML: {yaml_problem(exc)}") from exc
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: expected a mapping of settings at the top level")
        values.update(loaded)
    for name, field in ReceiverConfig.model_fields.items():
        raw = environ.get(ENV_PREFIX + name.upper())
        if raw is not None:
            values[name] = [p for p in raw.split(",") if p] if field.annotation == list[str] else raw
    values.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return ReceiverConfig.model_validate(values)
    except ValidationError as exc:
        where = f" (from {path}, the environment or flags)" if path else " (from the environment or flags)"
        raise ConfigError(validation_problems(exc, top="config") + where) from exc
