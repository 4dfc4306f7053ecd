/**
 * Both decorator modes: this folder compiles with `experimentalDecorators` (its tsconfig.json;
 * vitest's esbuild reads it), so `@tool`, `@agent` and `Toolbox` below run as legacy decorators.
 * The design-type checks use the `design:*` metadata tsc emits under `emitDecoratorMetadata`,
 * applied here with `Reflect.metadata` exactly as tsc's output does. The last test builds the
 * example with the real tsc and runs it against the dev kernel.
 */
import "reflect-metadata";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Agent, agent, ConfigurationError, Toolbox, tool } from "@rebuno/sdk";
import { TestEnvironment } from "@rebuno/testing";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";

const run = promisify(execFile);
const exampleDir = fileURLToPath(new URL("..", import.meta.url));
const repoRoot = fileURLToPath(new URL("../../..", import.meta.url));
const design = (params: unknown[], returns: unknown) => [
  Reflect.metadata("design:type", Function),
  Reflect.metadata("design:paramtypes", params),
  Reflect.metadata("design:returntype", returns),
];
/** Applies decorators the way tsc's `__decorate` does (last first), on a prototype method. */
function decorateMethod(proto: object, key: string, decorators: unknown[]): void {
  let descriptor = Object.getOwnPropertyDescriptor(proto, key) as PropertyDescriptor;
  for (const d of [...decorators].reverse()) {
    const out = (d as (t: object, k: string, d: PropertyDescriptor) => PropertyDescriptor | undefined)(
      proto,
      key,
      descriptor,
    );
    if (out !== undefined) descriptor = out;
  }
  Object.defineProperty(proto, key, descriptor);
}

let env: TestEnvironment | undefined;
afterEach(async () => {
  await env?.teardown();
  env = undefined;
});

describe("@tool under experimentalDecorators", () => {
  it("registers every form on a Toolbox, binds methods per instance, and records calls", async () => {
    class Desk extends Toolbox {
      readonly prefix = "#";
      @tool async ping(): Promise<string> {
        return "pong";
      }
      @tool({ input: z.object({ id: z.string() }) })
      async find(args: { id: string }): Promise<string> {
        return `${this.prefix}${args.id}`;
      }
      @tool("lookup_v2", { input: z.object({ id: z.string() }), idempotency: "at_most_once" })
      async lookup(args: { id: string }): Promise<string> {
        return args.id;
      }
    }
    const desk = new Desk();
    expect(desk.tools.map((t) => [t.name, t.idempotency])).toEqual([
      ["ping", "safe_to_retry"],
      ["find", "safe_to_retry"],
      ["lookup_v2", "at_most_once"],
    ]);
    expect(desk.tool("find")?.inputSchema).toMatchObject({ properties: { id: { type: "string" } } });
    const detached = desk.find;
    const probe = (options: ConstructorParameters<typeof Agent>[2] & object) =>
      new Agent("probe", () => detached({ id: "7" }), options);
    env = await TestEnvironment.create({ agents: [probe] });
    const { execution, steps } = await env.run("probe", {});
    expect(execution.output).toBe("#7");
    expect(steps.map((s) => [s.target, s.args])).toEqual([["find", { id: "7" }]]);
  });

  it("refuses what TC39 mode refuses: parameters without input, fields, statics, duplicate ids", () => {
    expect(() => {
      class A extends Toolbox {
        @tool async take(args: { id: string }): Promise<string> {
          return args.id;
        }
      }
      return A;
    }).toThrow(/declares no input schema/);
    expect(() => {
      class B extends Toolbox {
        @tool("same") async a(): Promise<number> {
          return 1;
        }
        @tool("same") async b(): Promise<number> {
          return 2;
        }
      }
      return B;
    }).toThrow(new ConfigurationError('duplicate tool id "same" in one toolbox: methods a() and b()'));
    expect(() => {
      class C extends Toolbox {
        @tool static async s(): Promise<number> {
          return 1;
        }
      }
      return C;
    }).toThrow(/'s' is static/);
    const asAny = tool as unknown as (target: object, key: string) => void;
    expect(() => asAny({}, "field")).toThrow(/'field' is a field/);
  });

  it("@agent sets the id of an Agent subclass that runs on the dev kernel", async () => {
    class Greeter extends Toolbox {
      @tool({ input: z.object({ name: z.string() }) })
      async greet(args: { name: string }): Promise<string> {
        return `hello ${args.name}`;
      }
    }
    const greeter = new Greeter();
    @agent("legacy-greeter")
    class LegacyGreeter extends Agent<{ name: string }, string> {
      override async run(input: { name: string }): Promise<string> {
        return greeter.greet({ name: input.name });
      }
    }
    env = await TestEnvironment.create({ agents: [LegacyGreeter] });
    const { execution, steps } = await env.run(LegacyGreeter, { name: "Ada" });
    expect(execution.agentId).toBe("legacy-greeter");
    expect(execution.output).toBe("hello Ada");
    expect(steps.map((s) => [s.target, s.status])).toEqual([["greet", "succeeded"]]);
  });
});

describe("design-type checks (emitDecoratorMetadata)", () => {
  const input = z.object({ a: z.number(), b: z.number() });
  const define = (params: unknown[], returns: unknown, options: object = { input }) => {
    class Calc extends Toolbox {
      async add(args: { a: number; b: number }): Promise<number> {
        return args.a + args.b;
      }
    }
    decorateMethod(Calc.prototype, "add", [tool("add", options), ...design(params, returns)]);
    return new Calc();
  };

  it("accepts one object parameter and a Promise return", () => {
    expect(define([Object], Promise).tools.map((t) => t.name)).toEqual(["add"]);
  });

  it("refuses two parameters, a primitive parameter, a non-Promise return, and required input with no parameter", () => {
    expect(() => define([Number, Number], Promise)).toThrow(
      /@tool\("add"\) on add\(\): the method declares 2 parameters, but a tool receives one argument object/,
    );
    expect(() => define([String], Promise)).toThrow(/the parameter is declared as string/);
    expect(() => define([Object], Number)).toThrow(/declared return type is Number.*Make the method async/);
    expect(() => define([], Promise)).toThrow(/requires 'a', 'b', but the method declares no parameter/);
  });
});

describe("examples/legacy-decorators", () => {
  it("builds with tsc (experimentalDecorators + emitDecoratorMetadata) and runs on the dev kernel", async () => {
    const tsc = fileURLToPath(new URL("node_modules/typescript/bin/tsc", `file://${repoRoot}/`));
    // -p builds the example alone; the packages it imports must be built already (pnpm build).
    await run(process.execPath, [tsc, "-p", exampleDir], { cwd: repoRoot, timeout: 240_000 });
    const { stdout } = await run(process.execPath, [`${exampleDir}/dist/main.js`], { timeout: 60_000 });
    expect(stdout).toContain(
      'metadata check: ConfigurationError: @tool("add") on add(): the method declares 2 parameters',
    );
    expect(stdout).toContain("agent legacy-shop: execution completed");
    expect(stdout).toContain(
      'step reserve succeeded {"sku":"tea","quantity":2} -> {"sku":"tea","remaining":10}',
    );
    expect(stdout).toContain('output: "reserved 2 × tea, 10 left"');
  }, 300_000);
});
