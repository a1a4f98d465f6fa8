/**
 * Signs a Paddle Billing notification as Paddle does (`Paddle-Signature: ts=<unix>;h1=<hex>`,
 * HMAC-SHA256 over `<ts>:<raw body>`), so tests can send notices that
 * `services/billing/PaddleSignature.ts` accepts or refuses. Test-only: the service only verifies.
 */
import { createHmac } from "node:crypto"

export const signPaddle = (secret: string, ts: number, body: string) =>
  `ts=${ts};h1=${createHmac("sha256", secret).update(`${ts}:${body}`).digest("hex")}`
