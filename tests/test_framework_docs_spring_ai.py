"""docs/frameworks/spring_ai.md's snippets run as written on the JVM, exporting to a real
``otel-reliability serve``: the run reaches the receiver and is judged as ``eval`` judges the
captured scenario.

The Maven project ``tests/java_spring_ai_docs`` holds the page's dependencies (checked against
its ``xml`` snippet) at the versions the capture pinned; ``.ci/setup`` brings its artifacts into
``~/.m2`` (the test's Maven goals, compiling nothing), so the test builds offline. The page's ``java``
snippet (a ``Calculator`` service that builds its ``ChatClient`` from the injected builder, with
a ``multiply`` ``@Tool``) goes into the project's package, and its ``application.properties``
lines, the endpoint's port swapped for the receiver's, into the working directory, where Spring
Boot reads them. The user's part is the test's: ``DocsApplication`` asks the calculator the
captured single_tool question against a scripted OpenAI-compatible model served here (the
model's URL, key and name on the command line, as a user's ``application.properties`` would
also hold them).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
import xml.etree.ElementTree as ET
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from .receiver_harness import CORPUS, eval_json, receivers, wait_until  # noqa: F401 - fixture

PAGE = Path(__file__).resolve().parents[1] / "docs" / "frameworks" / "spring_ai.md"
PROJECT = Path(__file__).resolve().parent / "java_spring_ai_docs"
MVN, JAVA = shutil.which("mvn"), shutil.which("java")
POM = "{http://maven.apache.org/POM/4.0.0}"
pytestmark = pytest.mark.skipif(MVN is None or JAVA is None, reason="mvn or java is missing (Maven and a JDK 17)")

QUESTION = "What is 10 times 5?"
MULTIPLY = {"id": "call_mul_1", "type": "function", "function": {"name": "multiply", "arguments": '{"a":10,"b":5}'}}


def snippet(language: str) -> str:
    [code] = re.findall(rf"^```{language}\n(.*?)^```", PAGE.read_text(), re.S | re.M)
    return code


class ScriptedModel(BaseHTTPRequestHandler):
    """OpenAI chat completions as the capture's scripted server answered single_tool: a call to
    ``multiply(10, 5)`` until the request carries its result, then the text ``50``."""

    def do_POST(self) -> None:  # noqa: N802 - the http.server hook
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        answered = any(m.get("role") == "tool" for m in request["messages"])
        if answered:
            message, finish_reason = {"role": "assistant", "content": "50"}, "stop"
        else:
            message, finish_reason = {"role": "assistant", "content": None, "tool_calls": [MULTIPLY]}, "tool_calls"
        body = json.dumps(
            {
                "id": f"chatcmpl-scripted-{2 if answered else 1}",
                "object": "chat.completion",
                "created": 1796000000,
                "model": request["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
            }
        ).encode()
        self.send_response(200 if self.path.endswith("/chat/completions") else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the http.server hook
        pass


@pytest.fixture
def scripted_model():
    server = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_the_project_s_dependencies_are_the_page_s():
    def coordinates(dependencies: ET.Element) -> set[tuple[str | None, str | None]]:
        """groupId and artifactId of each dependency, with or without the POM namespace (the page's has none)."""
        return {
            (d.findtext(f"{ns}groupId"), d.findtext(f"{ns}artifactId"))
            for ns in ("", POM)
            for d in dependencies.iter(f"{ns}dependency")
        }

    page = coordinates(ET.fromstring(f"<dependencies>{snippet('xml')}</dependencies>"))
    project = ET.parse(PROJECT / "pom.xml").getroot().find(f"{POM}dependencies")
    assert page and coordinates(project) == page


def test_the_spring_ai_page_s_snippets_run_on_the_jvm_and_the_run_is_judged_by_the_receiver(
    receivers,  # noqa: F811 - the fixture
    scripted_model,
    tmp_path,
):
    app = tmp_path / "app"
    shutil.copytree(PROJECT, app, ignore=shutil.ignore_patterns("target"))
    (app / "src" / "main" / "java" / "springaidocs" / "PageSnippet.java").write_text("package springaidocs;\n\n" + snippet("java"))
    # offline: .ci/setup brought every artifact into ~/.m2, and the test must not wait on a registry
    built = subprocess.run(
        [MVN, "-q", "-B", "-o", "compile", "dependency:build-classpath", "-Dmdep.outputFile=classpath.txt"],
        cwd=app,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, f"{built.stdout}\n{built.stderr}\n(.ci/setup fills ~/.m2 for this offline build)"

    receiver = receivers.start("spring-ai-page")
    properties = snippet("properties")
    assert "http://localhost:4318/v1/traces" in properties
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "application.properties").write_text(properties.replace("http://localhost:4318", receiver.http_url))
    classpath = f"{app / 'target' / 'classes'}:{(app / 'classpath.txt').read_text().strip()}"
    done = subprocess.run(
        [
            *(JAVA, "-cp", classpath, "springaidocs.DocsApplication"),
            f"--spring.ai.openai.base-url={scripted_model}",
            "--spring.ai.openai.api-key=none",
            "--spring.ai.openai.chat.model=scripted-model",
            f"--docs.question={QUESTION}",
        ],
        cwd=run_dir,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "answer: 50" in done.stdout.splitlines(), done.stdout
    assert "Failed to publish metrics" not in done.stdout, "the page's properties leave no metrics to push"

    results = wait_until(lambda: receiver.settled() and receiver.results()["results"], 30, "the run's verdict")
    [captured] = eval_json([CORPUS / "spring_ai" / "single_tool.json"])["results"]

    def judged(result: dict) -> tuple:
        chain = [(a["agent"], a["tool"], a["outcome"], a["call_id"], a["arguments"]) for a in result["chain"]]
        return result["agent"], result["agent_named"], result["eval_status"], chain

    assert [judged(r) for r in results] == [judged(captured)]
