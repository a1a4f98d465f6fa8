/**
 * Sign in, or sign up. On a new installation the first sign-up becomes the owner; later
 * sign-ups need the owner's invite, whose token arrives in the hash (`#/signup?invite=…`).
 */
import { useState } from "preact/hooks"
import { ErrorNote, Busy } from "../components/Status.tsx"
import { useAction } from "../components/useAction.ts"
import { signIn, signUp, type WebSession } from "../session.ts"

export const SignInPage = (
  { mode, invite, onSignedIn }: {
    readonly mode: "signin" | "signup"
    readonly invite?: string | undefined
    readonly onSignedIn: (session: WebSession) => void
  }
) => {
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const { busy: running, error, run } = useAction<true>()
  const busy = running === true
  const signingUp = mode === "signup"

  const submit = (event: Event) => {
    event.preventDefault()
    void run(true, async () => {
      onSignedIn(signingUp ? await signUp(email.trim(), password, invite) : await signIn(email.trim(), password))
    })
  }

  return (
    <section class="card narrow" aria-labelledby="auth-title">
      <h1 id="auth-title">{signingUp ? "Create your account" : "Sign in"}</h1>
      {signingUp && (
        <p class="muted" data-testid="signup-note">
          {invite === undefined
            ? "On a new installation the first account becomes its owner, with the Admin page; after that, sign-up needs an invite from the owner."
            : "You were invited: choose the password for this account."}
        </p>
      )}
      <form onSubmit={submit} aria-describedby={error === undefined ? undefined : "auth-error"}>
        <label for="email">Email</label>
        <input id="email" type="email" autoComplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <label for="password">Password</label>
        <input
          id="password"
          type="password"
          autoComplete={signingUp ? "new-password" : "current-password"}
          required
          minLength={10}
          maxLength={256}
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        {signingUp && <p class="hint">10 to 256 characters.</p>}
        <button type="submit" class="primary" disabled={busy}>{signingUp ? "Create account" : "Sign in"}</button>
      </form>
      {busy && <Busy label={signingUp ? "Creating your account" : "Signing in"} />}
      <div id="auth-error"><ErrorNote error={error} /></div>
      <p>
        {signingUp
          ? <>Have an account? <a href="#/signin">Sign in</a></>
          : <>New here? <a href="#/signup">Create an account</a></>}
      </p>
    </section>
  )
}
