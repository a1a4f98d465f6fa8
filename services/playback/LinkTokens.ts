/**
 * Tokens of signed media links (playback audio, clip videos). A token is
 * `<expiry unix seconds>.<HMAC>` where the HMAC covers a version, the purpose, the id of
 * the thing served and the expiry: a token is bound to one resource and one use, cannot be
 * extended by editing its expiry, and carries no key. The signature is checked before the
 * expiry, so an altered token never learns whether it would still have been in time.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { LinkTokenMissing, LinkTokenRejected } from "../../src/contract/api/Errors.ts"
import { Signer } from "../security/Signer.ts"

export type LinkPurpose = "audio" | "clip"

export interface IssuedToken {
  readonly token: string
  /** Seconds from now until the token stops working. */
  readonly expiresIn: number
}

const shape = /^(\d{1,12})\.([A-Za-z0-9_-]{20,100})$/

const signedText = (purpose: LinkPurpose, id: string, expiry: number) => `media-link:v1|${purpose}|${id}|${expiry}`

export class LinkTokens extends Context.Service<LinkTokens, {
  issue(purpose: LinkPurpose, id: string, lifetimeSeconds: number): Effect.Effect<IssuedToken>
  /** Fails 401 without a token, 403 `TOKEN_INVALID` / `TOKEN_EXPIRED` otherwise. */
  verify(purpose: LinkPurpose, id: string, token: string | undefined): Effect.Effect<void, LinkTokenMissing | LinkTokenRejected>
}>()("verbatim/playback/LinkTokens") {
  static readonly layer = Layer.effect(
    LinkTokens,
    Effect.gen(function*() {
      const signer = yield* Signer

      const issue = Effect.fn("LinkTokens.issue")(function*(purpose: LinkPurpose, id: string, lifetimeSeconds: number) {
        const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const expiry = now + lifetimeSeconds
        return { token: `${expiry}.${signer.sign(signedText(purpose, id, expiry))}`, expiresIn: lifetimeSeconds }
      })

      const verify = Effect.fn("LinkTokens.verify")(function*(purpose: LinkPurpose, id: string, token: string | undefined) {
        if (token === undefined || token === "") {
          return yield* new LinkTokenMissing({ error: "This link needs its token; ask for a new link." })
        }
        const parts = shape.exec(token)
        if (parts === null || !signer.verify(signedText(purpose, id, Number(parts[1])), parts[2]!)) {
          return yield* new LinkTokenRejected({
            error: "The link's token is not valid for this resource; ask for a new link.",
            code: "TOKEN_INVALID"
          })
        }
        const now = (yield* Clock.currentTimeMillis) / 1000
        if (Number(parts[1]) <= now) {
          return yield* new LinkTokenRejected({ error: "The link has expired; ask for a new one.", code: "TOKEN_EXPIRED" })
        }
      })

      return LinkTokens.of({ issue, verify })
    })
  )
}
