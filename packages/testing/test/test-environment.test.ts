/** TestEnvironment: dev kernel in process, agents wired through fetch, no sockets. */
import { Agent, type AgentOptions, step, Toolbox, tool } from "@rebuno/sdk";
import { TestEnvironment } from "@rebuno/testing";
import { afterEach, describe, expect, it } from "vitest";

// #region environment-agent
class Greeter extends Toolbox {
  @tool({ input: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } })
  async greet(args: { name: string }) {
    return `hello ${args.name}`;
  }
}

class Hello extends Agent<{ name: string }, string> {
  static override id = "hello";
  readonly greeter = new Greeter();
  override async run(input: { name: string }) {
    const n = await step("n", () => 1);
    return `${await this.greeter.greet({ name: input.name })} #${n}`;
  }
}
// #endregion

let env: TestEnvironment | undefined;
afterEach(async () => {
  await env?.teardown();
  env = undefined;
});

describe("TestEnvironment", () => {
  it("runs an agent class end to end and returns steps in recording order with events", async () => {
    // #region environment-run
    env = await TestEnvironment.create({ agents: [Hello] });
    const result = await env.run(Hello, { name: "Ada" });
    expect(result.execution.status).toBe("completed");
    expect(result.output).toBe("hello Ada #1");
    expect(result.steps.map((s) => [s.kind, s.target])).toEqual([
      ["local", "n"],
      ["tool_call", "greet"],
    ]);
    expect(result.events.some((e) => e.type === "execution.completed")).toBe(true);
    // #endregion
    expect(env.agent(Hello).id).toBe("hello");
    expect(env.kernel.url).toBeUndefined();
  });

  it("accepts factories and per-agent policies", async () => {
    const factory = (options: AgentOptions) =>
      // `execute` is the framework entry: a denial comes back as the LLM's string.
      new Agent("deny-all", () => new Greeter().tool("greet")?.execute({ name: "x" }), options);
    env = await TestEnvironment.create({
      agents: [factory, Hello],
      policy: { "deny-all": "default_action: deny\nrules: []\n" },
    });
    expect((await env.run("deny-all", {})).output).toMatch(/^greet not allowed. reason: /);
    expect((await env.run(Hello, { name: "B" })).output).toBe("hello B #1");
  });

  it("refuses two agents with one id", async () => {
    await expect(TestEnvironment.create({ agents: [Hello, Hello] })).rejects.toThrow(
      "two agents with id 'hello'",
    );
  });
});
