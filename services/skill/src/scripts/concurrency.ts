/** Gives a taken slot back; calling it again does nothing. */
export type ReleaseSlot = () => void;

interface Waiter {
  tenantId: string;
  take: () => void;
}

/**
 * Script slots: at most `perTenant` running per tenant and `total` running in all. Waiters are
 * served in arrival order, but a waiter whose tenant is at its own limit is passed over rather
 * than holding back the waiters behind it, so one busy tenant never stalls another.
 */
export function createScriptSlots(limits: { perTenant: number; total: number }) {
  const runningByTenant = new Map<string, number>();
  let runningTotal = 0;
  const waiting = new Set<Waiter>();

  const hasRoom = (tenantId: string) => runningTotal < limits.total && (runningByTenant.get(tenantId) ?? 0) < limits.perTenant;

  function take(tenantId: string): ReleaseSlot {
    runningTotal += 1;
    runningByTenant.set(tenantId, (runningByTenant.get(tenantId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      runningTotal -= 1;
      const left = runningByTenant.get(tenantId)! - 1;
      if (left === 0) runningByTenant.delete(tenantId);
      else runningByTenant.set(tenantId, left);
      serveWaiters();
    };
  }

  function serveWaiters() {
    for (const waiter of waiting) {
      if (runningTotal >= limits.total) return;
      if (hasRoom(waiter.tenantId)) {
        waiting.delete(waiter);
        waiter.take();
      }
    }
  }

  return {
    /**
     * A slot for the tenant, or undefined when none came free within `waitMs`. Rejects with the
     * signal's reason when it aborts while waiting.
     */
    acquire(tenantId: string, waitMs: number, signal?: AbortSignal): Promise<ReleaseSlot | undefined> {
      return new Promise((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        // Every waiter lacks room (each release serves those that have it), so taking a free slot at once jumps no one who could run.
        if (hasRoom(tenantId)) return resolve(take(tenantId));
        const stopWaiting = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', abort);
          waiting.delete(waiter);
        };
        const abort = () => {
          stopWaiting();
          reject(signal!.reason);
        };
        const waiter: Waiter = {
          tenantId,
          take: () => {
            stopWaiting();
            resolve(take(tenantId));
          },
        };
        const timer = setTimeout(() => {
          stopWaiting();
          resolve(undefined);
        }, waitMs);
        signal?.addEventListener('abort', abort, { once: true });
        waiting.add(waiter);
      });
    },
  };
}
