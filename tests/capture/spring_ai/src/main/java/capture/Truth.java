package capture;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.json.JsonMapper;

/**
 * What really ran, recorded inside the tool bodies, in the format capture_common.save_scenario
 * writes: {seq, name, arguments, outcome ok|error|refused, agent, tool_call_id, ...}. The call id is
 * the scripted server's: the first call it handed out with this name and these arguments.
 */
final class Truth {

  private static final JsonMapper JSON = JsonMapper.builder().build();
  private final ScriptedOpenAI model;
  private final List<Map<String, Object>> executions = new ArrayList<>();
  private final List<Map<String, Object>> refusals = new ArrayList<>();
  private final List<Integer> refusedAfter = new ArrayList<>();
  private int run = 1;

  Truth(ScriptedOpenAI model) {
    this.model = model;
  }

  synchronized void reset() {
    executions.clear();
    refusals.clear();
    refusedAfter.clear();
    run = 1;
  }

  /** Later records belong to the n-th run of a scenario with more than one (multi-turn). */
  synchronized void run(int number) {
    run = number;
  }

  synchronized void record(String name, Map<String, Object> arguments, String outcome, String agent, Map<String, Object> extra) {
    Map<String, Object> entry = new LinkedHashMap<>();
    entry.put("seq", executions.size() + 1);
    entry.put("name", name);
    entry.put("arguments", arguments);
    entry.put("outcome", outcome);
    entry.put("agent", agent);
    entry.put("tool_call_id", model.claim(name, JSON.valueToTree(arguments)));
    entry.putAll(extra);
    if (run > 1) {
      entry.put("run", run);
    }
    executions.add(entry);
  }

  /**
   * A call the framework refused (its body never ran): it goes after the first {@code after}
   * executions of the scenario, so the truth keeps the real order.
   */
  synchronized void refused(String name, Map<String, Object> arguments, String agent, String reason, String kind, String callId,
      int after) {
    Map<String, Object> entry = new LinkedHashMap<>();
    entry.put("name", name);
    entry.put("arguments", arguments);
    entry.put("outcome", "refused");
    entry.put("refusal_kind", kind);
    entry.put("agent", agent);
    entry.put("reason", reason);
    entry.put("tool_call_id", callId);
    refusals.add(entry);
    refusedAfter.add(after);
  }

  synchronized List<Map<String, Object>> executions() {
    List<Map<String, Object>> all = new ArrayList<>(executions);
    for (int i = refusals.size() - 1; i >= 0; i--) {
      all.add(Math.min(refusedAfter.get(i), all.size()), refusals.get(i));
    }
    for (int i = 0; i < all.size(); i++) {
      all.get(i).put("seq", i + 1);
    }
    return all;
  }
}
