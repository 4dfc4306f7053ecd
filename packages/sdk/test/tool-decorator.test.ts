/** Definition-time behaviour of `@tool`, `Toolbox`, `defineTool` and `wrapTool` (no kernel). */
import {
  ConfigurationError,
  defineTool,
  METADATA_SYMBOL,
  TOOLS_METADATA_KEY,
  Toolbox,
  tool,
  toolboxMetadata,
  wrapTool,
} from "@rebuno/sdk";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";

// #region forms
const ChargeInput = z.object({ card: z.string(), cents: z.number().int().positive() });

class Billing extends Toolbox {
  @tool("charge", {
    idempotency: "at_most_once",
    input: ChargeInput,
    description: "Charge a card",
    resources: ["ledger"],
  })
  async charge(args: z.infer<typeof ChargeInput>) {
    return { charged: args.cents };
  }

  @tool({ input: z.object({ query: z.string(), limit: z.number().int().optional() }) })
  async search(args: { query: string; limit?: number }) {
    return [args.query];
  }

  @tool() async empty() {
    return null;
  }

  @tool("lookup_v2", { input: z.object({ id: z.string() }) }) async lookup(args: { id: string }) {
    return args.id;
  }

  @tool({ description: "refund it", idempotency: "at_most_once", input: z.object({ id: z.string() }) })
  async refund(args: { id: string }) {
    return args.id;
  }

  helper() {
    return "not a tool";
  }
}
// #endregion

describe("@tool forms and metadata", () => {
  const billing = new Billing();

  it("registers every decorator form with the right id", () => {
    expect(billing.tools.map((t) => t.name)).toEqual(["charge", "search", "empty", "lookup_v2", "refund"]);
  });

  it("exposes framework-facing fields", () => {
    const charge = billing.tool("charge");
    expect(charge).toBeDefined();
    expect(charge?.description).toBe("Charge a card");
    expect(charge?.idempotency).toBe("at_most_once");
    expect(charge?.resources).toEqual(["ledger"]);
    expect(charge?.inputSchema).toMatchObject({
      type: "object",
      properties: { card: { type: "string" }, cents: { type: "integer" } },
      required: ["card", "cents"],
    });
    const search = billing.tool("search");
    expect(search?.idempotency).toBe("safe_to_retry");
    expect(search?.resources).toEqual([]);
    expect(search?.description).toBe("");
    expect(search?.inputSchema).toMatchObject({ type: "object", properties: { query: { type: "string" } } });
    expect(billing.tool("empty")?.inputSchema).toEqual({ type: "object", properties: {} });
    expect(billing.tool("refund")?.description).toBe("refund it");
  });

  it("keeps the method's name and length", () => {
    expect(billing.charge.name).toBe("charge");
    expect(billing.charge.length).toBe(1);
    expect(billing.empty.length).toBe(0);
    expect(Billing.prototype.lookup.name).toBe("lookup");
  });

  it("makes tools callable, enumerable, spreadable and iterable", () => {
    const search = billing.tool("search");
    expect(typeof search).toBe("function");
    expect({ ...search }).toMatchObject({ name: "search", idempotency: "safe_to_retry" });
    expect([...billing].map((t) => t.name)).toEqual(billing.tools.map((t) => t.name));
    expect(Array.isArray(billing.tools)).toBe(true);
    expect(billing.tools).toBe(billing.tools);
  });

  it("records metadata on the class (Symbol.metadata)", () => {
    const md = (Billing as unknown as Record<symbol, Record<symbol, Map<string, unknown>>>)[METADATA_SYMBOL];
    expect([...(md?.[TOOLS_METADATA_KEY]?.keys() ?? [])]).toEqual([
      "charge",
      "search",
      "empty",
      "lookup",
      "refund",
    ]);
    expect(toolboxMetadata(Billing).map((m) => m.methodName)).toContain("lookup");
  });
});

describe("inheritance", () => {
  // #region inheritance
  class Base extends Toolbox {
    @tool async ping() {
      return "base";
    }
    @tool async pong() {
      return "base";
    }
  }
  class Derived extends Base {
    @tool("ping", { description: "overridden" }) override async ping() {
      return "derived";
    }
    override async pong() {
      return "plain";
    }
    @tool async extra() {
      return 1;
    }
  }
  // #endregion

  it("inherits, overrides in place, and lets a plain override drop a tool", () => {
    expect(new Derived().tools.map((t) => [t.name, t.description])).toEqual([
      ["ping", "overridden"],
      ["extra", ""],
    ]);
    expect(new Base().tools.map((t) => [t.name, t.description])).toEqual([
      ["ping", ""],
      ["pong", ""],
    ]);
  });
});

describe("definition-time errors", () => {
  it("rejects a duplicate id in one class", () => {
    expect(() => {
      class Dup extends Toolbox {
        @tool("same") async a() {}
        @tool("same") async b() {}
      }
      return Dup;
    }).toThrow(new ConfigurationError('duplicate tool id "same" in one toolbox: methods a() and b()'));
  });

  it("rejects reusing an inherited id for another method", () => {
    class P extends Toolbox {
      @tool("x") async a() {}
    }
    expect(() => {
      class C extends P {
        @tool("x") async b() {}
      }
      return C;
    }).toThrow(/duplicate tool id "x": b\(\) reuses the id of inherited a\(\)/);
  });

  it("rejects ids providers refuse", () => {
    expect(() => tool("has space")).toThrow(ConfigurationError);
    expect(() => tool("a".repeat(65))).toThrow(/\^\[a-zA-Z0-9_-\]\{1,64\}\$/);
    expect(() => {
      class Bad extends Toolbox {
        @tool async "dotted.name"() {}
      }
      return Bad;
    }).toThrow(ConfigurationError);
  });

  it("rejects fields, getters, static and private methods", () => {
    const asAny = tool as unknown as (...a: unknown[]) => never;
    expect(() => {
      class F extends Toolbox {
        @asAny field = 1;
      }
      return F;
    }).toThrow("@tool can only decorate methods, but 'field' is a field");
    expect(() => {
      class G extends Toolbox {
        @asAny get value() {
          return 1;
        }
      }
      return G;
    }).toThrow(/'value' is a getter/);
    expect(() => {
      class S extends Toolbox {
        @tool static async s() {}
      }
      return S;
    }).toThrow(/'s' is static/);
    expect(() => {
      class P2 extends Toolbox {
        // biome-ignore lint/correctness/noUnusedPrivateClassMembers: the decorator must reject it
        @tool async #hidden() {}
      }
      return P2;
    }).toThrow(/is private/);
  });

  it("refuses a method that takes arguments without an input schema, naming the tool and the fix (#7)", () => {
    const define = () => {
      class Stock extends Toolbox {
        @tool("check_stock") async checkStock(args: { sku: string }) {
          return args.sku;
        }
      }
      return Stock;
    };
    expect(define).toThrow(ConfigurationError);
    expect(define).toThrow(
      /@tool\("check_stock"\) on checkStock\(\): the method takes an argument object but declares no input schema/,
    );
    expect(define).toThrow(/Add `input` to the options/);
    // With a schema, or without a parameter, the same method is fine; the schema carries the argument.
    class Stock extends Toolbox {
      @tool("check_stock", { input: z.object({ sku: z.string() }) }) async checkStock(args: { sku: string }) {
        return args.sku;
      }
      @tool async ping() {
        return "pong";
      }
    }
    const box = new Stock();
    expect(box.tool("check_stock")?.inputSchema).toMatchObject({
      properties: { sku: { type: "string" } },
      required: ["sku"],
    });
    expect(box.tool("ping")?.inputSchema).toEqual({ type: "object", properties: {} });
  });

  it("accepts the experimentalDecorators call shape (target, key, descriptor) too", () => {
    // The full legacy mode is tested in examples/legacy-decorators (compiled that way).
    const legacy = tool("x") as unknown as (
      target: object,
      key: string,
      descriptor: PropertyDescriptor,
    ) => PropertyDescriptor;
    const method = async () => 1;
    const installed = legacy({}, "x", { value: method, writable: true, configurable: true });
    expect(typeof installed.value).toBe("function");
    expect(installed.value).not.toBe(method);
    expect(installed.value.name).toBe("method");
    const bare = tool as unknown as (target: object, key: string, descriptor: PropertyDescriptor) => unknown;
    expect(() => bare({}, "f", { get: () => 1 })).toThrow(/'f' is an accessor/);
  });

  it("rejects bad options", () => {
    expect(() =>
      tool({ idempotency: "twice" as never })(async () => {}, {
        kind: "method",
        name: "m",
        static: false,
        private: false,
        metadata: {},
        addInitializer() {},
        access: {},
      } as never),
    ).toThrow(/idempotency must be "safe_to_retry" or "at_most_once"/);
    expect(() => defineTool({ name: "t", resources: ["bad key"], execute: () => 1 })).toThrow(/resource key/);
    expect(() => defineTool({ name: "t", input: { type: "string" }, execute: () => 1 })).toThrow(
      ConfigurationError,
    );
  });
});

describe("function forms", () => {
  it("defineTool builds a callable tool", () => {
    // #region define-tool
    const t = defineTool({
      name: "lookup",
      input: z.object({ sku: z.string() }),
      execute: async ({ sku }) => sku,
    });
    // #endregion
    expect(t.name).toBe("lookup");
    expect(t.inputSchema).toMatchObject({ type: "object", required: ["sku"] });
    expect(typeof t).toBe("function");
    // t(args) is the direct call (a denial throws); t.execute is the framework entry.
    expect(typeof t.execute).toBe("function");
    expect(t.execute).not.toBe(t);
  });

  it("types: a direct call promises the tool's own result; only execute may be the denial string (#6)", () => {
    const doubled = defineTool({
      name: "doubled",
      input: z.object({ x: z.number() }),
      execute: async ({ x }) => x * 2,
    });
    expectTypeOf(doubled).returns.toEqualTypeOf<Promise<number>>();
    expectTypeOf(doubled.execute).returns.toEqualTypeOf<Promise<number | string>>();
    const box = new Billing();
    expectTypeOf(box.search).returns.toEqualTypeOf<Promise<string[]>>();
    expect(typeof doubled.execute).toBe("function");
  });

  it("wrapTool passes schema and description through", () => {
    const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
    const t = wrapTool({
      name: "weather",
      description: "w",
      inputSchema: schema,
      invoke: (a: { city: string }) => a.city,
    });
    expect(t.description).toBe("w");
    expect(t.inputSchema).toMatchObject({ properties: { city: { type: "string" } } });
  });
});

describe("outside an execution", () => {
  it("throws the documented error with a fix", async () => {
    await expect(new Billing().search({ query: "x" })).rejects.toThrow(
      "tool 'search' called outside an active execution. Tools run inside a handler under agent.serve()/agent.fetch (or a test context).",
    );
  });
});
