import { parseMessage } from './parse-message.js';
import type { PubSub, Subscription } from './ports.js';

export interface AnnouncedCacheOptions {
  pubsub: PubSub;
  /** Where a change is announced, as the JSON message `{ "id": <key> }`. */
  channel: string;
  /** How long a value is trusted: the longest a change takes when its announcement is lost. */
  ttlMs: number;
  maxEntries: number;
  /** Told when announcements cannot be heard (the TTL alone then bounds how stale a value gets). */
  onUnheard: (error: unknown) => void;
  /** Whether a loaded value may be kept (one made per asker, say, may not); every value is by default. */
  keep?: (value: unknown) => boolean;
  /** Whether the last value stands when a lookup fails this way (an outage, not an answer that it is gone); always by default. */
  standsOn?: (error: unknown) => boolean;
}

/**
 * Values looked up elsewhere (governance, say), kept for `ttlMs` and looked up again as soon as a
 * change of their key is announced over pub/sub. Concurrent askers of one key share one lookup; a
 * lookup that overlapped an announcement is answered but not kept (it may be stale). When a lookup
 * fails, the last value known stands (even one an announcement made stale), if there is one.
 */
export function createAnnouncedCache<V>(options: AnnouncedCacheOptions) {
  const entries = new Map<string, { value: V; until: number }>();
  const loading = new Map<string, Promise<V>>();
  let subscription: Subscription | undefined;
  let announcementsHeard = 0;
  /** Stale, not gone: the last value still stands if the next lookup fails; a lookup under way is not kept. */
  const stale = (key: string) => {
    announcementsHeard += 1;
    const entry = entries.get(key);
    if (entry) entry.until = 0;
  };

  return {
    /** The value of `key`; `load` is asked when none is fresh. `onStale` is told when a failed load leaves the last value standing. */
    async get(key: string, load: () => Promise<V>, onStale?: (error: unknown) => void): Promise<V> {
      const cached = entries.get(key);
      if (cached && cached.until > Date.now()) return cached.value;
      let shared = loading.get(key);
      if (!shared) {
        const heardBefore = announcementsHeard;
        shared = load().then((value) => {
          if (announcementsHeard === heardBefore && (options.keep?.(value) ?? true)) {
            entries.delete(key);
            if (entries.size >= options.maxEntries) entries.delete(entries.keys().next().value!);
            entries.set(key, { value, until: Date.now() + options.ttlMs });
          }
          return value;
        });
        loading.set(key, shared);
        void shared.then(
          () => loading.delete(key),
          () => loading.delete(key),
        );
      }
      try {
        return await shared;
      } catch (error) {
        if (!cached || !(options.standsOn?.(error) ?? true)) throw error;
        onStale?.(error);
        return cached.value;
      }
    },

    /**
     * Makes `key`'s value stale here at once, as its announcement will elsewhere: for the process
     * that made the change, which must not answer from the old value until its own announcement
     * comes back over pub/sub.
     */
    forget: (key: string) => stale(key),

    /** Listens for announcements; without pub/sub, values are trusted for their TTL. */
    async start() {
      subscription = await options.pubsub
        .subscribe(options.channel, (message) => stale(announcedId(message) ?? ''))
        .catch((error) => {
          options.onUnheard(error);
          return undefined;
        });
    },

    stop: async () => subscription?.unsubscribe(),
  };
}

export type AnnouncedCache<V> = ReturnType<typeof createAnnouncedCache<V>>;

/** The key an announcement (`{ id }`: a change, a revocation) names; undefined for a message that is not one. */
export function announcedId(message: string): string | undefined {
  const id = (parseMessage(message) as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' ? id : undefined;
}
