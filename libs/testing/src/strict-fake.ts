/**
 * A strict fake: the methods a test configures, and a loud failure for any other call, so a rule
 * that starts calling something new is noticed instead of answered with undefined.
 */
export function strictFake<T extends object>(name: string, configured: Partial<T>): T {
  return new Proxy(configured as T, {
    get(target, property, receiver) {
      if (property in target) return Reflect.get(target, property, receiver);
      // Awaiting or inspecting the fake is not a call.
      if (typeof property === 'symbol' || property === 'then' || property === 'toJSON') return undefined;
      return () => {
        throw new Error(`${name}.${String(property)} was called, but this test did not configure it`);
      };
    },
  });
}
