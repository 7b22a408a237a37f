package springaidocs;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.CommandLineRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * The user's part around the page's snippet (the {@code Calculator} service and its
 * {@code CalculatorTools}, written into this package by the test): asks the calculator one
 * question, prints the answer and closes the context, which flushes the spans to the endpoint of
 * the page's {@code application.properties}.
 */
@SpringBootApplication
public class DocsApplication {

  public static void main(String[] args) {
    System.exit(SpringApplication.exit(SpringApplication.run(DocsApplication.class, args)));
  }

  @Bean
  CommandLineRunner askOnce(Calculator calculator, @Value("${docs.question}") String question) {
    return args -> System.out.println("answer: " + calculator.ask(question));
  }
}
