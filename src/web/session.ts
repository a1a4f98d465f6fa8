/**
 * The signed-in person, as the page knows them: `GET /web/session` on load (the HttpOnly cookie
 * identifies the session), then the typed client is given the session's access token and CSRF
 * token. The tokens live in memory only; a reload asks the service again.
 */
import type { WebSession } from "../contract/domain/People.ts"
import { call, setCredentials } from "./api.ts"

export type { WebSession }

export const adopt = (session: WebSession): WebSession => {
  setCredentials(
    session.signed_in
      ? { bearer: session.access_token ?? undefined, csrfToken: session.csrf_token ?? undefined }
      : { csrfToken: session.csrf_token ?? undefined }
  )
  return session
}

export const loadSession = async () => adopt(await call((api) => api.webAuth.session()))

export const signIn = async (email: string, password: string) =>
  adopt(await call((api) => api.webAuth.signIn({ payload: { email, password } })))

export const signUp = async (email: string, password: string, invite: string | undefined) =>
  adopt(await call((api) => api.webAuth.signUp({ payload: invite === undefined ? { email, password } : { email, password, invite } })))

export const signOut = async (everywhere: boolean) => {
  await call((api) => (everywhere ? api.webAccount.signOutAll() : api.webAccount.signOut()))
  setCredentials({})
}
