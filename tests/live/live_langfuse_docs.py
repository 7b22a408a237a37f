"""docs/frameworks/langfuse.md's snippet, run as written: its ``@observe`` agent loop, on
Langfuse's OpenAI drop-in and the capture's scripted model, is judged, stored and exported as
the captured langfuse unknown_tool scenario (the model asks for a tool the loop does not have,
then for multiply: ``FAILED``). It runs in the Langfuse capture's venv (.venv-live-langfuse).

Langfuse's own processor exports to ``LANGFUSE_BASE_URL``: here a local stand-in for its
server that takes every OTLP request, so nothing leaves the machine."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .harness import assert_page_judged_as_captured, run_page_snippet

import capture_common as cc  # noqa: E402 - on the path from harness


class LangfuseServerStandIn(BaseHTTPRequestHandler):
    """Answers every request as Langfuse's OTLP endpoint would accept it, and keeps nothing."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *_) -> None:
        pass


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    langfuse_server = ThreadingHTTPServer(("127.0.0.1", 0), LangfuseServerStandIn)
    threading.Thread(target=langfuse_server.serve_forever, daemon=True).start()
    with cc.ScriptedOpenAI() as model:
        monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-local")
        monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-local")
        monkeypatch.setenv("LANGFUSE_BASE_URL", f"http://127.0.0.1:{langfuse_server.server_address[1]}")
        monkeypatch.setenv("OPENAI_BASE_URL", model.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "scripted-no-key")
        page = run_page_snippet("langfuse", tmp_path / "results.db", monkeypatch)
        model.script(cc.reply(tool_calls=[cc.tool_call("format_disk", {"drive": "C:"}, "call_format_1")]),
                     cc.reply(tool_calls=[cc.tool_call("multiply", {"a": 6, "b": 7}, "call_multiply_1")]),
                     cc.reply("I cannot format disks; 6*7 is 42."))
        page.namespace["calculator"]("Format the disk, then 6*7")
        assert model.left() == 0, model.left()
    try:
        assert_page_judged_as_captured(page, "langfuse", "unknown_tool")
    finally:
        page.namespace["langfuse"].shutdown()
        langfuse_server.shutdown()
        langfuse_server.server_close()
