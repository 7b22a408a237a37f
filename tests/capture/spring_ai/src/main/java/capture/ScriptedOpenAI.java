package capture;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * An OpenAI-compatible chat-completions server on 127.0.0.1 that answers each request with the next
 * scripted turn (plain JSON, or server-sent events when the request asks to stream), so the
 * tool-call ids are chosen here and are ground truth too. Spring AI hands a {@code @Tool} method its
 * arguments but not the call's id, so every call handed out is kept for the tool bodies to
 * {@link #claim} the id of the call they carry out.
 */
final class ScriptedOpenAI implements AutoCloseable {

  /** One scripted assistant turn: tool calls, or text. */
  record Turn(List<Call> calls, String text) {}

  /** One scripted tool call: its name, its arguments (JSON text) and its id. */
  record Call(String name, String arguments, String id) {}

  static Turn calls(Call... calls) {
    return new Turn(List.of(calls), null);
  }

  static Turn text(String text) {
    return new Turn(List.of(), text);
  }

  static Call call(String name, String arguments, String id) {
    return new Call(name, arguments, id);
  }

  private static final JsonMapper JSON = JsonMapper.builder().build();

  private final HttpServer server;
  private final Deque<Turn> script = new ArrayDeque<>();
  private final List<Call> unclaimed = new ArrayList<>();
  private int serial;

  ScriptedOpenAI() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", this::answer);
    server.start();
  }

  String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
  }

  synchronized void script(Turn... turns) {
    script.clear();
    unclaimed.clear();
    script.addAll(List.of(turns));
  }

  synchronized int leftOver() {
    return script.size();
  }

  /** The id of the first call handed out with this name and these arguments, not yet claimed. */
  synchronized String claim(String name, JsonNode arguments) {
    for (Call call : unclaimed) {
      if (call.name().equals(name) && JSON.readTree(call.arguments()).equals(arguments)) {
        unclaimed.remove(call);
        return call.id();
      }
    }
    return null;
  }

  private void answer(HttpExchange exchange) throws IOException {
    JsonNode request = JSON.readTree(exchange.getRequestBody().readAllBytes());
    Turn turn;
    int number;
    synchronized (this) {
      turn = script.poll();
      number = ++serial;
      if (turn != null) {
        unclaimed.addAll(turn.calls());
      }
    }
    if (!exchange.getRequestURI().getPath().endsWith("/chat/completions") || turn == null) {
      send(exchange, 404, "application/json", "{\"error\":{\"message\":\"no scripted answer left\"}}");
      return;
    }
    String model = request.path("model").asString("scripted");
    if (request.path("stream").asBoolean(false)) {
      StringBuilder events = new StringBuilder();
      for (ObjectNode chunk : chunks(model, turn, number)) {
        events.append("data: ").append(JSON.writeValueAsString(chunk)).append("\n\n");
      }
      events.append("data: [DONE]\n\n");
      send(exchange, 200, "text/event-stream", events.toString());
    } else {
      send(exchange, 200, "application/json", JSON.writeValueAsString(completion(model, turn, number)));
    }
  }

  private static ArrayNode toolCalls(Turn turn, boolean indexed) {
    ArrayNode calls = JSON.createArrayNode();
    for (int i = 0; i < turn.calls().size(); i++) {
      Call call = turn.calls().get(i);
      ObjectNode node = calls.addObject();
      if (indexed) {
        node.put("index", i);
      }
      node.put("id", call.id()).put("type", "function");
      node.putObject("function").put("name", call.name()).put("arguments", call.arguments());
    }
    return calls;
  }

  private static ObjectNode usage() {
    return JSON.createObjectNode().put("prompt_tokens", 11).put("completion_tokens", 7).put("total_tokens", 18);
  }

  private static ObjectNode base(String model, int number, String object) {
    return JSON.createObjectNode().put("id", "chatcmpl-scripted-" + number).put("object", object)
        .put("created", 1796000000L).put("model", model);
  }

  private static String finish(Turn turn) {
    return turn.calls().isEmpty() ? "stop" : "tool_calls";
  }

  private static ObjectNode completion(String model, Turn turn, int number) {
    ObjectNode body = base(model, number, "chat.completion");
    ObjectNode choice = body.putArray("choices").addObject();
    choice.put("index", 0);
    ObjectNode message = choice.putObject("message").put("role", "assistant");
    if (turn.text() != null) {
      message.put("content", turn.text());
    } else {
      message.putNull("content");
      message.set("tool_calls", toolCalls(turn, false));
    }
    choice.put("finish_reason", finish(turn));
    body.set("usage", usage());
    return body;
  }

  private static List<ObjectNode> chunks(String model, Turn turn, int number) {
    List<ObjectNode> out = new ArrayList<>();
    ObjectNode first = base(model, number, "chat.completion.chunk");
    first.putArray("choices").addObject().put("index", 0).putNull("finish_reason")
        .putObject("delta").put("role", "assistant").put("content", "");
    out.add(first);
    ObjectNode body = base(model, number, "chat.completion.chunk");
    ObjectNode delta = body.putArray("choices").addObject().put("index", 0).putNull("finish_reason").putObject("delta");
    if (turn.text() != null) {
      delta.put("content", turn.text());
    } else {
      delta.set("tool_calls", toolCalls(turn, true));
    }
    out.add(body);
    ObjectNode last = base(model, number, "chat.completion.chunk");
    last.putArray("choices").addObject().put("index", 0).put("finish_reason", finish(turn)).putObject("delta");
    last.set("usage", usage());
    out.add(last);
    return out;
  }

  private static void send(HttpExchange exchange, int status, String type, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("content-type", type);
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
