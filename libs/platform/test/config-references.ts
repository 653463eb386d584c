import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';

/**
 * Helpers of the not-yet-effective tests: the key paths of the configuration schema, and a scan
 * of the source for code that reads a key.
 */

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

type Def = { type: string; shape?: Record<string, z.ZodType>; innerType?: z.ZodType; in?: z.ZodType; out?: z.ZodType };
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The schema without the defaults, optionality and parsing steps around it. */
function unwrap(schema: z.ZodType): z.ZodType {
  const def = defOf(schema);
  if (def.innerType) return unwrap(def.innerType);
  // A preprocessed value is pipe(transform, value); a transformed one is pipe(value, transform).
  if (def.type === 'pipe') return unwrap(defOf(def.in!).type === 'transform' ? def.out! : def.in!);
  return schema;
}

/** Every key path (`Section:Sub:Key`) down to the leaves. A record (providers, maps) is one key: its entries are open-ended names. */
export function schemaKeyPaths(schema: z.ZodType, prefix: string[] = []): string[] {
  const def = defOf(unwrap(schema));
  if (def.type !== 'object') return [prefix.join(':')];
  return Object.entries(def.shape!).flatMap(([key, child]) => schemaKeyPaths(child, [...prefix, key]));
}

// The schema reads keys only to cross-check them; the testing library's reads make nothing effective.
const NOT_SCANNED = ['libs/platform/src/config/', 'libs/contracts/src/generated/', 'libs/testing/'];

const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');

/** The `.ts` files under services/{name}/src and libs/{name}/src that can make a key effective, comments removed. */
export function sourceFiles(): { path: string; text: string }[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return walk(path);
      return entry.name.endsWith('.ts') ? [path] : [];
    });
  return ['services', 'libs']
    .flatMap((top) => readdirSync(join(ROOT, top), { withFileTypes: true }).map((entry) => join(ROOT, top, entry.name, 'src')))
    .flatMap((dir) => {
      try {
        return walk(dir);
      } catch {
        return [];
      }
    })
    .map((path) => ({ path: relative(ROOT, path), text: path }))
    .filter((file) => !NOT_SCANNED.some((prefix) => file.path.startsWith(prefix)))
    .map((file) => ({ path: file.path, text: withoutComments(readFileSync(file.text, 'utf8')) }));
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `.Key`, `?.Key`, or a computed `[name]` (which reads every entry, as `Services[service]` does). */
const step = (segment: string) => `(?:\\??\\.${escape(segment)}\\b|\\??\\.?\\[[^\\]\\n]+\\])`;
const steps = (segments: string[]) => segments.map(step).join('');

/**
 * Whether `text` reads the key `segments`: `config.Section.Key`, a section destructured from a
 * settings object (`const { Tools } = deps.settings; … Tools.DefaultTimeout`), or through a name
 * bound to an object on the way (`const scheduling = config.Scheduling; … scheduling.PollInterval`,
 * `const { MaxKeyLength } = context.config.Idempotency`). A name bound any other way (a
 * conditional, a function parameter) is not followed.
 */
export function readsKey(text: string, segments: string[]): boolean {
  if (!text.includes(segments[0])) return false;
  // bound[d]: the names of the object at depth d, that is of segments[0..d).
  const bound: Set<string>[] = [...segments, ''].map(() => new Set<string>());
  // An expression of the object at `depth`: a chain from any receiver or from the section's own
  // name (not inside a string: `Pick<HangarConfig, 'Tools'>` reads nothing), or from a bound name.
  const expressionAt = (depth: number) =>
    [
      `(?:\\??\\.|(?<![\\w$.'"\`]))${escape(segments[0])}\\b${steps(segments.slice(1, depth))}`,
      ...bound
        .slice(1, depth + 1)
        .flatMap((names, at) => [...names].map((name) => `(?<![\\w$.])${escape(name)}${steps(segments.slice(at + 1, depth))}`)),
    ].join('|');
  const bind = (depth: number, name: string) => {
    if (bound[depth].has(name)) return false;
    bound[depth].add(name);
    return true;
  };
  let changed = true;
  while (changed) {
    changed = false;
    for (let depth = 1; depth < segments.length; depth++) {
      const object = `[\\w$.?]*(?:${expressionAt(depth)})`;
      for (const [, name] of text.matchAll(new RegExp(`\\b(?:const|let|var)\\s+([\\w$]+)\\s*=\\s*${object}\\s*(?:[;\\n)]|$)`, 'g'))) {
        changed = bind(depth, name) || changed;
      }
      for (const [, names] of text.matchAll(new RegExp(`\\b(?:const|let|var)\\s*\\{([^}]*)\\}\\s*=\\s*${object}`, 'g'))) {
        for (const entry of names.split(',')) {
          const [key, local] = entry.split(':').map((part) => part.trim());
          if (key === segments[depth]) changed = bind(depth + 1, local || key) || changed;
        }
      }
    }
  }
  return new RegExp(expressionAt(segments.length)).test(text);
}
