package capture;

import java.util.Map;
import org.springframework.ai.tool.annotation.Tool;

/** The tools of one agent: each body records itself in the truth under the agent it was made for. */
public class Tools {

  private final String agent;
  private final Truth truth;

  Tools(String agent, Truth truth) {
    this.agent = agent;
    this.truth = truth;
  }

  @Tool(name = "multiply", description = "Multiply two integers.")
  public int multiply(int a, int b) {
    truth.record("multiply", Map.of("a", a, "b", b), "ok", agent, Map.of());
    return a * b;
  }

  @Tool(name = "add", description = "Add two integers.")
  public int add(int a, int b) {
    truth.record("add", Map.of("a", a, "b", b), "ok", agent, Map.of());
    return a + b;
  }

  @Tool(name = "lookup_weather", description = "Weather for a city.")
  public String lookupWeather(String city) {
    truth.record("lookup_weather", Map.of("city", city), "ok", agent, Map.of());
    return Map.of("Paris", "sunny, 21C", "London", "rain, 14C").getOrDefault(city, "unknown");
  }

  @Tool(name = "fetch_url", description = "Fetch a URL (always fails: no network here).")
  public String fetchUrl(String url) {
    truth.record("fetch_url", Map.of("url", url), "error", agent, Map.of("error", "IllegalStateException: network unreachable"));
    throw new IllegalStateException("network unreachable");
  }
}
