/**
 * Toolchain guard: pins the TC39 decorator semantics the SDK relies on. If a toolchain change
 * (vite/vitest/esbuild upgrade, an experimentalDecorators flag) breaks them, this fails first
 * and loudly instead of tools silently losing their metadata.
 */
import { METADATA_SYMBOL, Toolbox, tool } from "@rebuno/sdk";
import { describe, expect, it } from "vitest";

describe("TC39 decorator semantics (toolchain guard)", () => {
  it("has Symbol.metadata installed by importing the SDK", () => {
    expect(typeof (Symbol as { metadata?: symbol }).metadata).toBe("symbol");
    expect((Symbol as { metadata?: symbol }).metadata).toBe(METADATA_SYMBOL);
  });

  it("calls method decorators with (value, context) and runs addInitializer per instance", () => {
    const seen: { kind: string; name: string | symbol; static: boolean }[] = [];
    const initialized: unknown[] = [];
    function probe<T>(value: T, context: ClassMethodDecoratorContext): T {
      seen.push({ kind: context.kind, name: context.name, static: context.static });
      context.addInitializer(function (this: unknown) {
        initialized.push(this);
      });
      return value;
    }
    class Probe {
      @probe method() {
        return 1;
      }
    }
    expect(seen).toEqual([{ kind: "method", name: "method", static: false }]);
    const a = new Probe();
    const b = new Probe();
    expect(initialized).toEqual([a, b]);
  });

  it("gives the replacement wrapper the instance as this", () => {
    const seen: unknown[] = [];
    function wrap<This, R>(value: (this: This) => R, _context: ClassMethodDecoratorContext<This>) {
      return function (this: This): R {
        seen.push(this);
        return value.call(this);
      };
    }
    class Holder {
      readonly tag = "h";
      @wrap read() {
        return this.tag;
      }
    }
    const h = new Holder();
    expect(h.read()).toBe("h");
    expect(seen).toEqual([h]);
  });

  it("chains subclass metadata to the parent's without sharing own entries", () => {
    const key = Symbol("probe");
    function mark(name: string) {
      return (_value: unknown, context: ClassMethodDecoratorContext) => {
        const md = context.metadata as Record<symbol, string[]>;
        md[key] = Object.hasOwn(md, key) ? [...(md[key] ?? []), name] : [...(md[key] ?? []), name];
      };
    }
    class Parent {
      @mark("a") a() {}
    }
    class Child extends Parent {
      @mark("b") b() {}
    }
    const parentMd = (Parent as unknown as Record<symbol, Record<symbol, string[]>>)[METADATA_SYMBOL];
    const childMd = (Child as unknown as Record<symbol, Record<symbol, string[]>>)[METADATA_SYMBOL];
    expect(parentMd?.[key]).toEqual(["a"]);
    expect(childMd?.[key]).toEqual(["a", "b"]);
    expect(Object.getPrototypeOf(childMd)).toBe(parentMd);
  });

  it("keeps @tool inheritance working end to end (parent list unchanged)", () => {
    class Parent extends Toolbox {
      @tool async a() {
        return 1;
      }
    }
    class Child extends Parent {
      @tool async b() {
        return 2;
      }
    }
    expect(new Child().tools.map((t) => t.name)).toEqual(["a", "b"]);
    expect(new Parent().tools.map((t) => t.name)).toEqual(["a"]);
  });
});
