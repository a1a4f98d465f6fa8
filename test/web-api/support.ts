/**
 * Helpers for the website API tests: a browser-like caller that keeps the `vb_session` cookie
 * it was given and sends the session's CSRF token, over real sockets, with every answer also
 * checked against the service's own `/openapi.json`.
 */
import { expect } from "vitest"
import { makeChecker } from "../contract/openApiCheck.ts"
import type { TestServer } from "../support/server.ts"

export const password = "correct horse battery"

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: any
}

export interface WebUser {
  readonly email: string
  /** `vb_session=<token>` as the browser would send it back. */
  readonly cookie: string
  readonly csrf: string
  readonly accessToken: string
  readonly accountId: string
  readonly role: string
}

export interface CallOptions {
  readonly cookie?: string | undefined
  readonly csrf?: string | undefined
  readonly json?: unknown
  readonly headers?: Record<string, string>
}

export const makeWeb = async (server: TestServer) => {
  const checker = makeChecker(await (await server.get("/openapi.json")).json())

  /** One call; the answer is validated against the document (status listed, body shape). */
  const call = async (method: string, path: string, options: CallOptions = {}): Promise<Answer> => {
    const headers: Record<string, string> = { ...options.headers }
    if (options.cookie !== undefined) headers["Cookie"] = options.cookie
    if (options.csrf !== undefined) headers["X-CSRF-Token"] = options.csrf
    if (options.json !== undefined) headers["Content-Type"] = "application/json"
    const response = await fetch(server.url + path, {
      method,
      headers,
      body: options.json === undefined ? null : JSON.stringify(options.json)
    })
    const checked = await checker.check(method, server.url + path, response)
    return { status: checked.status, headers: checked.headers, body: checked.body }
  }

  /** The `name=value` part of the session cookie a response set. */
  const cookieOf = (answer: Answer) => {
    const line = answer.headers.getSetCookie().find((cookie) => cookie.startsWith("vb_session="))
    expect(line, "a vb_session cookie").toBeDefined()
    return line!.split(";")[0]!
  }

  const userOf = (email: string, answer: Answer): WebUser => {
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body.signed_in).toBe(true)
    return {
      email,
      cookie: cookieOf(answer),
      csrf: answer.body.csrf_token,
      accessToken: answer.body.access_token,
      accountId: answer.body.account.account_id,
      role: answer.body.account.role
    }
  }

  const signUp = async (email: string, invite?: string) =>
    userOf(email, await call("POST", "/web/signup", { json: invite === undefined ? { email, password } : { email, password, invite } }))

  const signIn = async (email: string, pw = password) =>
    userOf(email, await call("POST", "/web/signin", { json: { email, password: pw } }))

  /** A call as the signed-in user (cookie and CSRF token). */
  const as = (user: WebUser, method: string, path: string, options: CallOptions = {}) =>
    call(method, path, { cookie: user.cookie, csrf: user.csrf, ...options })

  /** An invite from the owner and the sign-up that uses it. */
  const invited = async (owner: WebUser, email: string) => {
    const invite = await as(owner, "POST", "/web/admin/invites", { json: { email } })
    expect(invite.status, JSON.stringify(invite.body)).toBe(200)
    const token = decodeURIComponent(new URL(invite.body.invite_url.replace("/#/", "/")).searchParams.get("invite")!)
    return signUp(email, token)
  }

  return { call, as, signUp, signIn, invited, cookieOf, checker }
}

export const expectCode = (answer: Answer, status: number, code: string) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status)
  expect(answer.body.code, JSON.stringify(answer.body)).toBe(code)
  expect(typeof answer.body.error).toBe("string")
}
