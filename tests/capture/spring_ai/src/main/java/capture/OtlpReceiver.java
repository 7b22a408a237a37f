package capture;

import com.google.protobuf.ByteString;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.GZIPInputStream;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * An OTLP/HTTP trace receiver on 127.0.0.1: {@code POST /v1/traces} with an
 * ExportTraceServiceRequest as protobuf (gzip or not), what Spring Boot's OTLP span exporter sends.
 * It keeps every request and writes them as OTLP/JSON the way the OTLP specification encodes it:
 * hex trace and span ids, integer enums, 64-bit integers as strings.
 */
final class OtlpReceiver implements AutoCloseable {

  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final HexFormat HEX = HexFormat.of();

  private final HttpServer server;
  private final List<ExportTraceServiceRequest> requests = new ArrayList<>();

  OtlpReceiver() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/v1/traces", this::receive);
    server.start();
  }

  String endpoint() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1/traces";
  }

  synchronized void clear() {
    requests.clear();
  }

  synchronized List<Span> spans() {
    List<Span> spans = new ArrayList<>();
    for (ExportTraceServiceRequest request : requests) {
      for (ResourceSpans rs : request.getResourceSpansList()) {
        for (ScopeSpans ss : rs.getScopeSpansList()) {
          spans.addAll(ss.getSpansList());
        }
      }
    }
    return spans;
  }

  private void receive(HttpExchange exchange) throws IOException {
    byte[] body = exchange.getRequestBody().readAllBytes();
    if ("gzip".equalsIgnoreCase(exchange.getRequestHeaders().getFirst("content-encoding"))) {
      try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(body))) {
        body = in.readAllBytes();
      }
    }
    ExportTraceServiceRequest request = ExportTraceServiceRequest.parseFrom(body);
    synchronized (this) {
      requests.add(request);
    }
    byte[] answer = ExportTraceServiceResponse.getDefaultInstance().toByteArray();
    exchange.getResponseHeaders().set("content-type", "application/x-protobuf");
    exchange.sendResponseHeaders(200, answer.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(answer);
    }
  }

  /** Every span received since {@link #clear}, as one OTLP/JSON export request. */
  synchronized ObjectNode document() {
    ObjectNode document = JSON.createObjectNode();
    ArrayNode all = document.putArray("resourceSpans");
    for (ExportTraceServiceRequest request : requests) {
      for (ResourceSpans rs : request.getResourceSpansList()) {
        ObjectNode resourceSpans = all.addObject();
        attributes(resourceSpans.putObject("resource"), rs.getResource().getAttributesList());
        ArrayNode scopes = resourceSpans.putArray("scopeSpans");
        for (ScopeSpans ss : rs.getScopeSpansList()) {
          ObjectNode scopeSpans = scopes.addObject();
          scope(scopeSpans.putObject("scope"), ss.getScope());
          ArrayNode spans = scopeSpans.putArray("spans");
          for (Span span : ss.getSpansList()) {
            span(spans.addObject(), span);
          }
          if (!ss.getSchemaUrl().isEmpty()) {
            scopeSpans.put("schemaUrl", ss.getSchemaUrl());
          }
        }
        if (!rs.getSchemaUrl().isEmpty()) {
          resourceSpans.put("schemaUrl", rs.getSchemaUrl());
        }
      }
    }
    return document;
  }

  static String hex(ByteString id) {
    return HEX.formatHex(id.toByteArray());
  }

  private static void scope(ObjectNode node, InstrumentationScope scope) {
    node.put("name", scope.getName());
    if (!scope.getVersion().isEmpty()) {
      node.put("version", scope.getVersion());
    }
    if (scope.getAttributesCount() > 0) {
      attributes(node, scope.getAttributesList());
    }
  }

  private static void span(ObjectNode node, Span span) {
    node.put("traceId", hex(span.getTraceId())).put("spanId", hex(span.getSpanId()));
    if (!span.getParentSpanId().isEmpty()) {
      node.put("parentSpanId", hex(span.getParentSpanId()));
    }
    if (!span.getTraceState().isEmpty()) {
      node.put("traceState", span.getTraceState());
    }
    node.put("flags", span.getFlags());
    node.put("name", span.getName()).put("kind", span.getKindValue());
    node.put("startTimeUnixNano", Long.toUnsignedString(span.getStartTimeUnixNano()));
    node.put("endTimeUnixNano", Long.toUnsignedString(span.getEndTimeUnixNano()));
    attributes(node, span.getAttributesList());
    ArrayNode events = node.putArray("events");
    for (Span.Event event : span.getEventsList()) {
      ObjectNode e = events.addObject();
      e.put("timeUnixNano", Long.toUnsignedString(event.getTimeUnixNano())).put("name", event.getName());
      attributes(e, event.getAttributesList());
    }
    ArrayNode links = node.putArray("links");
    for (Span.Link link : span.getLinksList()) {
      ObjectNode l = links.addObject();
      l.put("traceId", hex(link.getTraceId())).put("spanId", hex(link.getSpanId()));
      attributes(l, link.getAttributesList());
    }
    ObjectNode status = node.putObject("status");
    if (!span.getStatus().getMessage().isEmpty()) {
      status.put("message", span.getStatus().getMessage());
    }
    status.put("code", span.getStatus().getCodeValue());
  }

  private static void attributes(ObjectNode node, List<KeyValue> attributes) {
    ArrayNode out = node.putArray("attributes");
    for (KeyValue kv : attributes) {
      ObjectNode entry = out.addObject().put("key", kv.getKey());
      entry.set("value", value(kv.getValue()));
    }
  }

  private static ObjectNode value(AnyValue value) {
    ObjectNode node = JSON.createObjectNode();
    switch (value.getValueCase()) {
      case STRING_VALUE -> node.put("stringValue", value.getStringValue());
      case BOOL_VALUE -> node.put("boolValue", value.getBoolValue());
      case INT_VALUE -> node.put("intValue", Long.toString(value.getIntValue()));
      case DOUBLE_VALUE -> node.put("doubleValue", value.getDoubleValue());
      case BYTES_VALUE -> node.put("bytesValue", Base64.getEncoder().encodeToString(value.getBytesValue().toByteArray()));
      case ARRAY_VALUE -> {
        ArrayNode values = node.putObject("arrayValue").putArray("values");
        value.getArrayValue().getValuesList().forEach(v -> values.add(value(v)));
      }
      case KVLIST_VALUE -> {
        ObjectNode list = node.putObject("kvlistValue");
        attributes(list, value.getKvlistValue().getValuesList());
        list.set("values", list.remove("attributes"));
      }
      default -> { }
    }
    return node;
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
