package capture;

import java.util.Map;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.tool.annotation.Tool;

/** The orchestrator's one tool: asks the researcher agent (its own ChatClient call) and returns its answer. */
public class Research {

  private final ChatClient researcher;
  private final Truth truth;

  Research(ChatClient researcher, Truth truth) {
    this.researcher = researcher;
    this.truth = truth;
  }

  @Tool(name = "research", description = "Ask the research agent.")
  public String research(String question) {
    truth.record("research", Map.of("question", question), "ok", "orchestrator", Map.of("delegates_to", "researcher"));
    return researcher.prompt().user(question).tools(new Tools("researcher", truth)).call().content();
  }
}
