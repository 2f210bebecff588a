/**
 * Client hooks: `client.on('request' | 'response' | 'retry', listener)` for users' own telemetry. Every event
 * carries the method and the URL (scrubbed of secrets; credentials never travel in URLs anyway), never headers
 * or bodies.
 */

/** An HTTP attempt is about to be sent. */
export interface RequestEvent {
  method: string;
  /** The absolute URL, query included, scrubbed of known secrets. */
  url: string;
  /** 1 for the first attempt, 2 for the first retry (or the replay after a 401), … */
  attempt: number;
}

/** An HTTP attempt ended: with a status, or with a network error or timeout (`status` undefined, `error` set). */
export interface ResponseEvent extends RequestEvent {
  status?: number;
  /** Error class name when no response arrived: `ConnectionError` or `TimeoutError`. */
  error?: string;
  /** Milliseconds from sending to the end of the response body (or the failure). */
  elapsedMs: number;
}

/** A failed attempt will be retried after `delayMs`. */
export interface RetryEvent extends RequestEvent {
  /** The status of the failed attempt, when it had one. */
  status?: number;
  /** The error class of the failed attempt (`ServerError`, `RateLimitedError`, `ConnectionError`, …). */
  error: string;
  /** Wait before the next attempt (backoff or `Retry-After`). */
  delayMs: number;
  /** Milliseconds since the first attempt of this request began. */
  elapsedMs: number;
}

/** The events of the client's `hooks` option, by name. */
export interface ClientEvents {
  request: RequestEvent;
  response: ResponseEvent;
  retry: RetryEvent;
}

/** A listener of one event. */
export type ClientListener<E extends keyof ClientEvents> = (event: ClientEvents[E]) => void;

/** Listener lists for the client events; a throwing listener is reported to `onListenerError`, never to the request. */
export class Hooks {
  readonly #listeners: { [E in keyof ClientEvents]: Set<ClientListener<E>> } = {
    request: new Set(),
    response: new Set(),
    retry: new Set(),
  };

  constructor(private readonly onListenerError: (event: string, err: unknown) => void = () => undefined) {}

  /** Adds a listener. */
  on<E extends keyof ClientEvents>(event: E, listener: ClientListener<E>): void {
    const set = this.#listeners[event] as Set<ClientListener<E>> | undefined;
    if (!set) throw new TypeError(`unknown client event ${JSON.stringify(event)}; known: request, response, retry`);
    if (typeof listener !== 'function') throw new TypeError('a client event listener must be a function');
    set.add(listener);
  }

  /** Removes a listener. */
  off<E extends keyof ClientEvents>(event: E, listener: ClientListener<E>): void {
    (this.#listeners[event] as Set<ClientListener<E>> | undefined)?.delete(listener);
  }

  /** True when any listener is registered, so a request builds (and scrubs) no event nobody hears. */
  get active(): boolean {
    return this.#listeners.request.size + this.#listeners.response.size + this.#listeners.retry.size > 0;
  }

  /** Calls every listener of `event` with a frozen copy of it. */
  emit<E extends keyof ClientEvents>(event: E, payload: ClientEvents[E]): void {
    const set = this.#listeners[event] as Set<ClientListener<E>>;
    if (set.size === 0) return;
    const frozen = Object.freeze({ ...(payload as object) }) as ClientEvents[E];
    for (const listener of set) {
      try {
        listener(frozen);
      } catch (err) {
        // Telemetry must never break a request.
        this.onListenerError(event, err);
      }
    }
  }
}
