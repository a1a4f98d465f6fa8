/**
 * Paddle Billing webhook signatures: `Paddle-Signature: ts=<unix>;h1=<hex>` where h1 is
 * HMAC-SHA256 over `<ts>:<raw body>` with the notification destination's secret. Several
 * h1 values may be present during secret rotation; any match is accepted. Notices older
 * than five minutes are refused (replay protection).
 */
import { createHmac, timingSafeEqual } from "node:crypto"

export const toleranceSeconds = 300

export const verifyPaddle = (secret: string, header: string | undefined, body: string, nowSeconds: number): boolean => {
  if (header === undefined) return false
  const parts = header.split(";").map((part) => part.trim().split("="))
  const ts = Number(parts.find(([k]) => k === "ts")?.[1])
  if (!Number.isInteger(ts) || Math.abs(nowSeconds - ts) > toleranceSeconds) return false
  const expected = Buffer.from(createHmac("sha256", secret).update(`${ts}:${body}`).digest("hex"))
  return parts.filter(([k]) => k === "h1").some(([, value]) => {
    const given = Buffer.from(value ?? "")
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
}
