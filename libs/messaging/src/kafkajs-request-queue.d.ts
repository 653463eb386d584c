// kafkajs ships no types for its internal modules; the one {@link ./kafkajs-idle-loop.ts} patches.
declare module 'kafkajs/src/network/requestQueue/index.js' {
  export default class RequestQueue {
    pending: unknown[];
    checkPendingRequests(): void;
    throttledUntil: number;
    scheduleCheckPendingRequests(): void;
  }
}
