package capture;

import static capture.ScriptedOpenAI.call;
import static capture.ScriptedOpenAI.calls;
import static capture.ScriptedOpenAI.text;

import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.MessageChatMemoryAdvisor;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Captures Spring AI's observations (ChatClient, advisors, chat model, tool calls: Micrometer
 * observations bridged to OpenTelemetry by Spring Boot's micrometer-tracing-bridge-otel) for the
 * tool-call scenarios below. The app's model is Spring AI's OpenAI chat model pointed at a scripted
 * server on 127.0.0.1 ({@link ScriptedOpenAI}); its spans leave through Spring Boot's own OTLP span
 * exporter ({@code management.opentelemetry.tracing.export.otlp.endpoint}) to a receiver of ours on
 * 127.0.0.1 ({@link OtlpReceiver}), flushed after each scenario.
 *
 * <p>Writes tests/fixtures/corpus/spring_ai/&lt;scenario&gt;.json (OTLP/JSON, hex ids) and
 * &lt;scenario&gt;.truth.json. Run: {@code cd tests/capture/spring_ai && mvn -q -B spring-boot:run}.
 */
@SpringBootApplication
public class CaptureApplication {

  static final String FRAMEWORK = "spring_ai";
  private static final JsonMapper JSON = JsonMapper.builder().build();

  public static void main(String[] args) throws Exception {
    try (OtlpReceiver receiver = new OtlpReceiver(); ScriptedOpenAI model = new ScriptedOpenAI()) {
      SpringApplication app = new SpringApplication(CaptureApplication.class);
      Map<String, Object> properties = new LinkedHashMap<>();
      properties.put("spring.main.web-application-type", "none");
      properties.put("spring.application.name", "corpus-spring-ai");
      properties.put("spring.ai.openai.api-key", "none");
      properties.put("spring.ai.openai.base-url", model.baseUrl());
      properties.put("spring.ai.openai.chat.model", "scripted-model");
      properties.put("spring.ai.tools.observations.include-content", "true");
      properties.put("spring.ai.tools.limits.max-calls-per-tool-default", "2");
      properties.put("spring.ai.tools.limits.on-limit-exceeded", "return-error-response");
      properties.put("management.tracing.sampling.probability", "1.0");
      properties.put("management.opentelemetry.tracing.export.otlp.endpoint", receiver.endpoint());
      properties.put("management.otlp.metrics.export.enabled", "false");
      properties.put("management.logging.export.otlp.enabled", "false");
      app.setDefaultProperties(properties);
      ConfigurableApplicationContext context = app.run(args);
      Path out = Path.of(System.getProperty("corpus.out", "../../fixtures/corpus/" + FRAMEWORK)).toAbsolutePath().normalize();
      new Scenarios(context.getBeanProvider(ChatClient.Builder.class), model, receiver, context.getBean(SdkTracerProvider.class), out).runAll();
      SpringApplication.exit(context);
    }
  }

  /** The scenarios, and writing what each one left. */
  static final class Scenarios {

    private final ObjectProvider<ChatClient.Builder> builders;
    private final ScriptedOpenAI model;
    private final OtlpReceiver receiver;
    private final SdkTracerProvider tracing;
    private final Path out;
    private final Truth truth;

    Scenarios(ObjectProvider<ChatClient.Builder> builders, ScriptedOpenAI model, OtlpReceiver receiver, SdkTracerProvider tracing, Path out) {
      this.builders = builders;
      this.model = model;
      this.receiver = receiver;
      this.tracing = tracing;
      this.out = out;
      this.truth = new Truth(model);
    }

    /** A ChatClient from the autoconfigured builder: only that one carries the observation registry. */
    private ChatClient client() {
      return builders.getObject().build();
    }

    private String ask(String agent, String prompt) {
      return client().prompt().user(prompt).tools(new Tools(agent, truth)).call().content();
    }

    interface Body {
      void run() throws Exception;
    }

    record Scenario(String name, String description, Body body, Map<String, Object> delegation, String notes) {}

    void runAll() throws Exception {
      List<Scenario> scenarios = new ArrayList<>();
      scenarios.add(new Scenario("single_tool", "calculator: multiply(10, 5), then text", () -> {
        model.script(calls(call("multiply", "{\"a\":10,\"b\":5}", "call_mul_1")), text("50"));
        ask("calculator", "What is 10 times 5?");
      }, Map.of(), ""));
      scenarios.add(new Scenario("no_tools", "calculator answers with text, tools offered", () -> {
        model.script(text("Hello! Ask me to multiply or add."));
        ask("calculator", "Hi");
      }, Map.of(), ""));
      scenarios.add(new Scenario("parallel_tools", "two calls in one model turn: multiply(3, 4) and add(3, 4), then text", () -> {
        model.script(calls(call("multiply", "{\"a\":3,\"b\":4}", "call_mul_1"), call("add", "{\"a\":3,\"b\":4}", "call_add_1")),
            text("12 and 7"));
        ask("calculator", "3*4 and 3+4?");
      }, Map.of(), "Spring AI runs the calls of one turn one after the other, in the order the model gave them."));
      scenarios.add(new Scenario("sequential_chain", "planner: lookup_weather(Paris), then multiply(21, 2), then text", () -> {
        model.script(calls(call("lookup_weather", "{\"city\":\"Paris\"}", "call_weather_1")),
            calls(call("multiply", "{\"a\":21,\"b\":2}", "call_mul_1")), text("Paris is sunny; twice 21 is 42"));
        ask("planner", "Weather in Paris, and double the temperature");
      }, Map.of(), ""));
      scenarios.add(new Scenario("repeated_tool", "multiply(2, 3), then multiply(6, 7) in the next turn, then text", () -> {
        model.script(calls(call("multiply", "{\"a\":2,\"b\":3}", "call_mul_1")), calls(call("multiply", "{\"a\":6,\"b\":7}", "call_mul_2")),
            text("6, then 42"));
        ask("calculator", "2*3, then 6*7");
      }, Map.of(), ""));
      scenarios.add(new Scenario("tool_error", "fetcher: fetch_url throws; Spring AI sends the error text to the model; then text", () -> {
        model.script(calls(call("fetch_url", "{\"url\":\"https://example.invalid/\"}", "call_fetch_1")),
            text("The page could not be fetched."));
        ask("fetcher", "Fetch https://example.invalid/");
      }, Map.of(), "spring.ai.tools.throw-exception-on-error is false (the default): the exception's message goes back as the tool's answer."));
      scenarios.add(new Scenario("unknown_tool", "the model asks for format_disk (no such tool), then multiply(6, 7), then text", () -> {
        model.script(calls(call("format_disk", "{\"drive\":\"C:\"}", "call_unknown_1")), calls(call("multiply", "{\"a\":6,\"b\":7}", "call_mul_1")),
            text("42"));
        truth.refused("format_disk", Map.of("drive", "C:"), "calculator", "no tool of that name", "unknown_tool", "call_unknown_1", 0);
        ask("calculator", "Format the disk, then 6*7");
      }, Map.of(), ""));
      scenarios.add(new Scenario("invalid_arguments", "multiply with a=\"ten\" cannot be bound to an int (the body never runs), then multiply(10, 5), then text", () -> {
        model.script(calls(call("multiply", "{\"a\":\"ten\",\"b\":5}", "call_mul_bad")), calls(call("multiply", "{\"a\":10,\"b\":5}", "call_mul_1")),
            text("50"));
        truth.refused("multiply", Map.of("a", "ten", "b", 5), "calculator", "arguments cannot be converted to the method's parameters",
            "invalid_arguments", "call_mul_bad", 0);
        ask("calculator", "ten times 5");
      }, Map.of(), ""));
      scenarios.add(new Scenario("limit", "spring.ai.tools.limits.max-calls-per-tool-default 2, on-limit-exceeded return-error-response: one turn asks multiply three times, the third is refused; then text", () -> {
        model.script(calls(call("multiply", "{\"a\":2,\"b\":3}", "call_mul_1"), call("multiply", "{\"a\":6,\"b\":7}", "call_mul_2"),
            call("multiply", "{\"a\":8,\"b\":9}", "call_mul_3")), text("6, 42, and no more"));
        truth.refused("multiply", Map.of("a", 8, "b", 9), "calculator", "per-tool call limit (2) reached: an error response goes to the model",
            "limit", "call_mul_3", 2);
        ask("calculator", "2*3, 6*7, then 8*9");
      }, Map.of(), ""));
      scenarios.add(new Scenario("multi_turn", "two user turns on one conversation (MessageChatMemoryAdvisor): multiply(10, 5), then add(50, 1)", () -> {
        model.script(calls(call("multiply", "{\"a\":10,\"b\":5}", "call_mul_1")), text("50"), calls(call("add", "{\"a\":50,\"b\":1}", "call_add_1")),
            text("51"));
        ChatMemory memory = MessageWindowChatMemory.builder().build();
        ChatClient chat = builders.getObject().defaultAdvisors(MessageChatMemoryAdvisor.builder(memory).build()).build();
        Tools tools = new Tools("calculator", truth);
        chat.prompt().user("What is 10 times 5?").tools(tools).advisors(a -> a.param(ChatMemory.CONVERSATION_ID, "conversation-1")).call().content();
        truth.run(2);
        chat.prompt().user("And plus 1?").tools(tools).advisors(a -> a.param(ChatMemory.CONVERSATION_ID, "conversation-1")).call().content();
      }, Map.of(), "Each ChatClient call is its own trace; the memory advisor replays turn 1 in the second call's prompt."));
      scenarios.add(new Scenario("delegation_agent_as_tool", "orchestrator's tool research runs the researcher ChatClient, which calls lookup_weather(London)", () -> {
        model.script(calls(call("research", "{\"question\":\"Weather in London?\"}", "call_research_1")),
            calls(call("lookup_weather", "{\"city\":\"London\"}", "call_weather_sub_1")), text("London: rain, 14C"), text("It rains in London."));
        client().prompt().user("What is the weather in London?").tools(new Research(client(), truth)).call().content();
      }, Map.of("parent", "orchestrator", "child", "researcher", "delegating_tool", "research", "delegating_call_id", "call_research_1",
          "child_call_ids", List.of("call_weather_sub_1"), "mechanism", "a ChatClient called inside a @Tool method"),
          "Spring AI has no agent or handoff primitive: a ChatClient inside a tool is its delegation."));
      scenarios.add(new Scenario("single_tool_stream", "calculator with stream(): multiply(10, 5), then text, streamed", () -> {
        model.script(calls(call("multiply", "{\"a\":10,\"b\":5}", "call_mul_1")), text("50"));
        client().prompt().user("What is 10 times 5?").tools(new Tools("calculator", truth)).stream().content().collectList().block();
      }, Map.of(), "The model is asked to stream (SSE chunks from the scripted server)."));

      Files.createDirectories(out);
      for (Scenario scenario : scenarios) {
        capture(scenario);
      }
    }

    private void capture(Scenario scenario) throws Exception {
      receiver.clear();
      truth.reset();
      String runOutcome = "ok";
      String runError = null;
      try {
        scenario.body().run();
      } catch (Exception error) {
        runOutcome = "error";
        runError = error.getClass().getSimpleName() + ": " + String.valueOf(error.getMessage()).lines().findFirst().orElse("");
      }
      List<Span> spans = settled();
      if (spans.isEmpty()) {
        throw new IllegalStateException(scenario.name() + ": no span reached the receiver");
      }
      if (model.leftOver() > 0 && runOutcome.equals("ok")) {
        throw new IllegalStateException(scenario.name() + ": " + model.leftOver() + " scripted answers never asked for");
      }
      List<Map<String, Object>> executions = truth.executions();
      matchSpans(spans, executions);
      ObjectNode truthDocument = JSON.createObjectNode();
      truthDocument.put("framework", FRAMEWORK).put("scenario", scenario.name()).put("description", scenario.description())
          .put("run_outcome", runOutcome).put("run_error", runError);
      truthDocument.set("tool_executions", JSON.valueToTree(executions));
      truthDocument.set("delegation", JSON.valueToTree(scenario.delegation()));
      truthDocument.put("notes", scenario.notes());
      truthDocument.set("span_index", JSON.valueToTree(spanIndex(spans)));
      write(out.resolve(scenario.name() + ".json"), receiver.document());
      write(out.resolve(scenario.name() + ".truth.json"), truthDocument);
      System.out.printf("saved %s/%s: %d spans, %d tool executions, run %s%s%n", FRAMEWORK, scenario.name(), spans.size(), executions.size(),
          runOutcome, runError == null ? "" : " (" + runError + ")");
    }

    /**
     * Every span of the scenario, once no more arrive: a streamed call ends its ChatClient and
     * advisor spans when the stream's subscribers finish, a moment after the caller has its content.
     */
    private List<Span> settled() throws InterruptedException {
      int seen = -1;
      while (true) {
        tracing.forceFlush().join(30, TimeUnit.SECONDS);
        List<Span> spans = receiver.spans();
        if (spans.size() == seen) {
          return spans;
        }
        seen = spans.size();
        Thread.sleep(1000);
      }
    }

    private static void write(Path path, Object document) throws Exception {
      Files.writeString(path, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(document) + "\n");
    }

    private static String attribute(Span span, String key) {
      return span.getAttributesList().stream().filter(kv -> kv.getKey().equals(key)).map(KeyValue::getValue)
          .map(v -> v.getStringValue()).findFirst().orElse(null);
    }

    private static final String[] STATUS = {"UNSET", "OK", "ERROR"};

    private static List<Span> byStart(List<Span> spans) {
      List<Span> sorted = new ArrayList<>(spans);
      sorted.sort(Comparator.comparingLong(Span::getStartTimeUnixNano));
      return sorted;
    }

    private static List<Map<String, Object>> spanIndex(List<Span> spans) {
      List<Map<String, Object>> index = new ArrayList<>();
      for (Span span : byStart(spans)) {
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("span_id", OtlpReceiver.hex(span.getSpanId()));
        entry.put("parent_span_id", span.getParentSpanId().isEmpty() ? null : OtlpReceiver.hex(span.getParentSpanId()));
        entry.put("trace_id", OtlpReceiver.hex(span.getTraceId()));
        entry.put("name", span.getName());
        entry.put("status", STATUS[span.getStatus().getCodeValue()]);
        index.add(entry);
      }
      return index;
    }

    /** A tool's span carries the call's id ({@code spring.ai.tool.call.id}): each truth entry gets the span of its call. */
    private static void matchSpans(List<Span> spans, List<Map<String, Object>> executions) {
      List<Span> tools = byStart(spans).stream().filter(s -> attribute(s, "spring.ai.tool.call.id") != null).toList();
      for (Map<String, Object> entry : executions) {
        Span found = tools.stream().filter(s -> attribute(s, "spring.ai.tool.call.id").equals(entry.get("tool_call_id"))).findFirst()
            .orElse(null);
        Map<String, Object> match = null;
        if (found != null) {
          match = new LinkedHashMap<>();
          match.put("span_id", OtlpReceiver.hex(found.getSpanId()));
          match.put("span_name", found.getName());
          match.put("status", STATUS[found.getStatus().getCodeValue()]);
          match.put("matched_by", "spring.ai.tool.call.id");
        }
        entry.put("refused".equals(entry.get("outcome")) ? "tool_span_despite_refusal" : "execution_span", match);
      }
    }
  }
}
