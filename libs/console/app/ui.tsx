import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { describeError } from './api.js';

/** A value loaded once per `deps`, with its loading and failed states, and a way to load it again. */
export function useLoaded<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ value?: T; error?: unknown; loading: boolean }>({ loading: true });
  const reload = useCallback(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (value) => current && setState({ value, loading: false }),
      (error: unknown) => current && setState({ error, loading: false }),
    );
    return () => void (current = false);
  }, deps);
  useEffect(reload, [reload]);
  return { ...state, reload };
}

/**
 * Calls `reload` every `everyMs` while `active`: for what changes elsewhere without an event to
 * follow (a decision made in another tab, a suite run's cases ending).
 */
export function useRecheck(active: boolean, reload: () => void, everyMs: number) {
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(reload, everyMs);
    return () => clearInterval(timer);
  }, [active, reload, everyMs]);
}

export function Problem({ error }: { error: unknown }) {
  return (
    <p class="problem" role="alert">
      {describeError(error)}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" aria-busy="true">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** What a load shows while it has nothing to show yet: loading, its error, or `children` with the value. */
export function Loaded<T>({
  state,
  what,
  children,
}: {
  state: { value?: T; error?: unknown; loading: boolean };
  what: string;
  children: (value: T) => ComponentChildren;
}) {
  if (state.error !== undefined) return <Problem error={state.error} />;
  if (state.value === undefined) return <Loading what={what} />;
  return <>{children(state.value)}</>;
}

export function Status({ status }: { status: string }) {
  return <span class={`status status-${status.toLowerCase()}`}>{status}</span>;
}

export const formatCost = (cost: { total: number; currency: string } | null | undefined) =>
  cost ? `${cost.total.toFixed(cost.total < 0.01 ? 6 : 4)} ${cost.currency}` : '—';

export const formatTime = (at: string | null | undefined) => (at ? new Date(at).toLocaleString() : '—');

export const formatDuration = (ms: number | null | undefined) =>
  ms == null ? '—' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;

/** How many entries a paged list reads at a time. */
const PAGE_SIZE = 50;

/** The `skip` and `take` of page `page` (from 0) of a paged list route. */
export const pageQuery = (page: number) => ({ skip: String(page * PAGE_SIZE), take: String(PAGE_SIZE) });

/** Newer and Older for a list read a page at a time, newest first: Older while the page came back full. */
export function Pager({ page, shown, onPage }: { page: number; shown: number; onPage: (page: number) => void }) {
  const full = shown === PAGE_SIZE;
  return (
    <div class="row">
      <button class="quiet" disabled={page === 0} onClick={() => onPage(page - 1)}>
        Newer
      </button>
      <button class="quiet" disabled={!full} onClick={() => onPage(page + 1)}>
        Older
      </button>
    </div>
  );
}

/** A column of a {@link Table}: its heading and what a row shows; an action column stays on a phone. */
export interface Column<Row = any> {
  label: string;
  value: (row: Row) => ComponentChildren;
  isAction?: boolean;
}

/** A list as a table, a row per entry; the first cell links to `linkTo(row)` when that is given. */
export function Table<Row>({
  label,
  columns,
  rows,
  rowKey,
  linkTo,
}: {
  label: string;
  columns: Column<Row>[];
  rows: Row[];
  rowKey?: (row: Row) => string;
  linkTo?: (row: Row) => string;
}) {
  return (
    <table aria-label={label}>
      <thead>
        <tr>
          {columns.map((column) => (
            <th class={column.isAction ? 'actions' : undefined}>{column.label}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={rowKey?.(row)}>
            {columns.map((column, index) => (
              <td class={column.isAction ? 'actions' : undefined}>
                {index === 0 && linkTo ? <a href={linkTo(row)}>{column.value(row)}</a> : column.value(row)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
