/**
 * Postgres `bigint` columns arrive as JS `BigInt`. The sizes and timestamps we keep in
 * them stay far below 2^53, so rows are turned into plain numbers before decoding.
 */
export const numbersFromBigInt = (row: unknown): unknown => {
  if (row === null || typeof row !== "object") return row
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(row)) out[key] = typeof value === "bigint" ? Number(value) : value
  return out
}
