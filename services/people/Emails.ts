/** How the website reads an email: trimmed and lower-cased (as Accounts stores it), with an @ and a dot after it. */
import { ValidationFailed } from "../../src/contract/api/Errors.ts"
import { Effect } from "effect"

const emailShape = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export const normalizeEmail = (email: string) => email.trim().toLowerCase()

/** The normalized email, or 422 on `[body, email]`. */
export const checkEmail = (raw: string): Effect.Effect<string, ValidationFailed> => {
  const email = normalizeEmail(raw)
  if (emailShape.test(email)) return Effect.succeed(email)
  const msg = "Not an email address"
  return Effect.fail(new ValidationFailed({ error: `"${raw}" is not an email address.`, code: "VALIDATION_FAILED", detail: [{ loc: ["body", "email"], msg }] }))
}
