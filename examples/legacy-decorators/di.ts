/**
 * A NestJS-style container in a few lines: `@Injectable()` marks a class, and `resolve(Class)`
 * builds it with its constructor parameters resolved from the types TypeScript records under
 * `emitDecoratorMetadata` (`design:paramtypes`), each as a singleton.
 */
import "reflect-metadata";

type Constructor<T = unknown> = new (...args: never[]) => T;

const injectable = new WeakSet<Function>();
const instances = new Map<Function, unknown>();

/** Marks a class as resolvable (NestJS's `@Injectable()`). */
export function Injectable(): ClassDecorator {
  return (target) => {
    injectable.add(target);
  };
}

/** The singleton of `type`, with its constructor dependencies resolved first. */
export function resolve<T>(type: Constructor<T>): T {
  const existing = instances.get(type);
  if (existing !== undefined) return existing as T;
  if (!injectable.has(type)) throw new Error(`${type.name} is not @Injectable()`);
  const params = (Reflect.getMetadata("design:paramtypes", type) as Constructor[] | undefined) ?? [];
  const instance = new type(...(params.map((p) => resolve(p)) as never[]));
  instances.set(type, instance);
  return instance;
}
