/**
 * Whether a database error is a unique violation (23505) of `constraint`: the partial unique indexes on live
 * terminals and cashiers turn a race between two creations into a clear Conflict instead of a 500. drizzle
 * wraps the driver's error in `cause`, raw pg queries throw it as is.
 *
 * @example
 * if (isUniqueViolation(err, "cashiers_merchant_pin_idx")) throw new Conflict("A cashier with this PIN already exists");
 */
export function isUniqueViolation(err: unknown, constraint: string): boolean {
  for (let e = err as { code?: string; constraint?: string; cause?: unknown } | undefined, i = 0; e && i < 3; i++) {
    if (e.code === "23505") return e.constraint === constraint;
    e = e.cause as typeof e;
  }
  return false;
}
