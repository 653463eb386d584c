/** One sample line of the Prometheus text format. */
export interface PrometheusSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PrometheusFamily {
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help?: string;
  samples: PrometheusSample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"\s*(,|$)/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['_sum', '_count'] };

/**
 * A strict parser of the Prometheus text exposition format (0.0.4): it throws, naming the line, on
 * anything Prometheus would refuse — a bad name, label or value, a second TYPE or HELP, a TYPE after
 * its samples, a family whose samples are not together, a histogram without its +Inf bucket or whose
 * buckets decrease or disagree with its count.
 */
export function parsePrometheusText(text: string): Map<string, PrometheusFamily> {
  const families = new Map<string, PrometheusFamily>();
  const closed = new Set<string>();
  const typed = new Set<string>();
  let current: string | undefined;
  const fail = (line: number, why: string): never => {
    throw new Error(`line ${line + 1}: ${why}`);
  };
  const familyOf = (sample: string) => {
    for (const [name, family] of families) {
      if (name === sample || (SUFFIXES[family.type] ?? []).some((suffix) => sample === name + suffix)) return name;
    }
    return sample;
  };
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (!line) return;
    const meta = /^#\s*(HELP|TYPE)\s+(\S+)(?:\s+(.*))?$/.exec(line);
    if (meta) {
      const [, kind, name, rest = ''] = meta;
      if (!METRIC_NAME.test(name!)) fail(index, `bad metric name ${name}`);
      if (closed.has(name!) || (families.get(name!)?.samples.length ?? 0) > 0) fail(index, `${kind} of ${name} after its samples`);
      const family = families.get(name!) ?? { type: 'untyped', samples: [] };
      if (kind === 'TYPE') {
        if (!TYPES.has(rest)) fail(index, `unknown type ${rest}`);
        if (typed.has(name!)) fail(index, `second TYPE of ${name}`);
        typed.add(name!);
        family.type = rest as PrometheusFamily['type'];
      } else {
        if (family.help !== undefined) fail(index, `second HELP of ${name}`);
        family.help = rest;
      }
      families.set(name!, family);
      return;
    }
    if (line.startsWith('#')) return;
    const sample = /^([^\s{]+)(?:\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?$/.exec(line) ?? fail(index, `not a sample: ${line}`);
    const [, name, labelText = '', valueText] = sample;
    if (!METRIC_NAME.test(name!)) fail(index, `bad metric name ${name}`);
    const labels: Record<string, string> = {};
    for (let rest = labelText; rest.trim();) {
      const label = LABEL.exec(rest) ?? fail(index, `bad labels: {${labelText}}`);
      if (label[1]! in labels) fail(index, `label ${label[1]} twice`);
      labels[label[1]!] = label[2]!.replace(/\\(.)/g, (_, char: string) => (char === 'n' ? '\n' : char));
      rest = rest.slice(label[0].length);
    }
    const value = /^[+-]?Inf$/.test(valueText!) ? Number(valueText!.replace('Inf', 'Infinity')) : Number(valueText);
    if (valueText !== 'NaN' && Number.isNaN(value)) fail(index, `bad value ${valueText}`);
    const familyName = familyOf(name!);
    if (current !== familyName) {
      if (closed.has(familyName)) fail(index, `samples of ${familyName} are not together`);
      if (current) closed.add(current);
      current = familyName;
    }
    const family = families.get(familyName) ?? { type: 'untyped' as const, samples: [] };
    family.samples.push({ name: name!, labels, value });
    families.set(familyName, family);
  });
  for (const [name, family] of families) if (family.type === 'histogram') checkHistogram(name, family);
  return families;
}

function checkHistogram(name: string, family: PrometheusFamily) {
  const series = new Map<string, { buckets: Array<[number, number]>; count?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [] };
    if (sample.name === `${name}_bucket`) {
      if (le === undefined) throw new Error(`${name}: a bucket without le`);
      entry.buckets.push([le === '+Inf' ? Infinity : Number(le), sample.value]);
    } else if (sample.name === `${name}_count`) entry.count = sample.value;
    series.set(key, entry);
  }
  for (const [key, { buckets, count }] of series) {
    const sorted = [...buckets].sort((a, b) => a[0] - b[0]);
    if (sorted.at(-1)?.[0] !== Infinity) throw new Error(`${name} ${key}: no +Inf bucket`);
    sorted.forEach(([, value], index) => {
      if (index > 0 && value < sorted[index - 1]![1]) throw new Error(`${name} ${key}: buckets decrease`);
    });
    if (count !== sorted.at(-1)![1]) throw new Error(`${name} ${key}: _count ${count} is not the +Inf bucket ${sorted.at(-1)![1]}`);
  }
}

/** The sum of a family's samples named `name` whose labels include `labels`. */
export function sampleSum(families: Map<string, PrometheusFamily>, name: string, labels: Record<string, string> = {}): number {
  return [...families.values()]
    .flatMap((family) => family.samples)
    .filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
    .reduce((sum, sample) => sum + sample.value, 0);
}
