/**
 * Domain errors: what a module throws when an operation cannot go on. Modules know no HTTP;
 * `api/errors.ts` maps each kind to the spec's status and body, for REST and GraphQL alike.
 * The message is the spec's text and is shown to the caller as it is.
 *
 * @example
 * if (!row) throw new NotFound("Payment not found");
 */
export type ErrorKind =
  | "invalid" // the request itself is wrong (400)
  | "unauthorized" // no or a bad credential (401)
  | "forbidden" // refused whoever asks this way, e.g. a cross-site request (403)
  | "not_found" // nothing the caller may see by that id (404)
  | "conflict" // the resource is not in a state that allows it (409)
  | "too_large" // a body over the documented size limit (413)
  | "unsupported_media" // a body of a type the operation does not read (415)
  | "rate_limited" // over a per-minute limit (429)
  | "failed" // a dependency failed; the message is safe to show (500)
  | "unavailable"; // a dependency is down, try again later (503)

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** A machine-readable code where the spec gives one (e.g. `invalid_query`). */
    readonly code?: string,
    /** Extra facts for the caller (e.g. `retryAfter` seconds). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class Invalid extends DomainError {
  constructor(message: string, code?: string) {
    super("invalid", message, code);
  }
}
export class Unauthorized extends DomainError {
  constructor(message = "Unauthorized") {
    super("unauthorized", message);
  }
}
export class Forbidden extends DomainError {
  constructor(message: string) {
    super("forbidden", message);
  }
}
export class NotFound extends DomainError {
  constructor(message: string) {
    super("not_found", message);
  }
}
export class Conflict extends DomainError {
  constructor(message: string) {
    super("conflict", message);
  }
}
export class TooLarge extends DomainError {
  constructor(message: string) {
    super("too_large", message);
  }
}
export class UnsupportedMedia extends DomainError {
  constructor(message: string) {
    super("unsupported_media", message);
  }
}
export class RateLimited extends DomainError {
  constructor(retryAfterSeconds: number, message = "Too many requests") {
    super("rate_limited", message, undefined, { retryAfter: retryAfterSeconds });
  }
}
export class Failed extends DomainError {
  constructor(message: string) {
    super("failed", message);
  }
}
export class Unavailable extends DomainError {
  /** `retryAfterSeconds`: when the dependency is known to take requests again (a `Retry-After` header). */
  constructor(message: string, retryAfterSeconds?: number) {
    super("unavailable", message, undefined, retryAfterSeconds === undefined ? undefined : { retryAfter: retryAfterSeconds });
  }
}

export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError;
