/**
 * The website's shell: who is signed in, the navigation, and the page the hash names.
 * Pages get their data through the typed client (api.ts); nothing here renders markup from
 * data — all user text goes through Preact as text.
 */
import { render } from "preact"
import { useEffect, useState } from "preact/hooks"
import { onSessionEnded } from "./api.ts"
import { ErrorNote, Busy } from "./components/Status.tsx"
import { AdminPage } from "./pages/AdminPage.tsx"
import { BalancePage } from "./pages/BalancePage.tsx"
import { ClipsPage } from "./pages/ClipsPage.tsx"
import { KeysPage } from "./pages/KeysPage.tsx"
import { LibraryPage } from "./pages/LibraryPage.tsx"
import { SearchPage } from "./pages/SearchPage.tsx"
import { SignInPage } from "./pages/SignInPage.tsx"
import { TranscriptPage } from "./pages/TranscriptPage.tsx"
import { type Route, navigate, useRoute } from "./router.ts"
import { loadSession, signOut, type WebSession } from "./session.ts"

const Nav = ({ session, route, onSignedOut }: {
  readonly session: WebSession
  readonly route: Route
  readonly onSignedOut: () => void
}) => {
  const [open, setOpen] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const links: ReadonlyArray<readonly [string, string, boolean]> = [
    ["#/library", "Library", route.page === "library" || route.page === "transcript" || route.page === "clips"],
    ["#/search", "Search", route.page === "search"],
    ["#/keys", "Keys", route.page === "keys"],
    ["#/balance", "Balance", route.page === "balance"],
    ...(session.account?.role === "owner" ? [["#/admin", "Admin", route.page === "admin"] as const] : [])
  ]
  useEffect(() => setOpen(false), [route])
  const leave = async (everywhere: boolean) => {
    setError(undefined)
    try {
      await signOut(everywhere)
      onSignedOut()
    } catch (failure) {
      setError(failure)
    }
  }
  return (
    <header class="top">
      <a class="brand" href="#/library">Verbatim</a>
      <button type="button" class="menu-button" aria-expanded={open} aria-controls="main-nav" onClick={() => setOpen(!open)}>
        Menu
      </button>
      <nav id="main-nav" class={open ? "main-nav open" : "main-nav"} aria-label="Main">
        {links.map(([href, label, current]) => (
          <a key={href} href={href} aria-current={current ? "page" : undefined}>{label}</a>
        ))}
        <span class="who" title={session.account?.email ?? ""}>{session.account?.email}</span>
        <button type="button" class="quiet" onClick={() => leave(false)}>Sign out</button>
        <button type="button" class="quiet" onClick={() => leave(true)}>Sign out everywhere</button>
      </nav>
      <ErrorNote error={error} />
    </header>
  )
}

const Page = ({ route, session }: { readonly route: Route; readonly session: WebSession }) => {
  switch (route.page) {
    case "library":
      return <LibraryPage view={route.view} />
    case "transcript":
      return <TranscriptPage jobId={route.jobId} />
    case "clips":
      return <ClipsPage jobId={route.jobId} />
    case "search":
      return <SearchPage query={route.query} />
    case "keys":
      return <KeysPage />
    case "balance":
      return <BalancePage owner={session.account?.role === "owner"} />
    case "admin":
      return session.account?.role === "owner"
        ? <AdminPage />
        : <p class="error" role="alert">Only the owner of this installation can open the Admin page.</p>
    case "signin":
    case "signup":
      return <LibraryPage view="jobs" />
    case "missing":
      return <p class="muted">There is no page at “{route.path}”. <a href="#/library">Go to the library</a>.</p>
  }
}

const titles: Record<Route["page"], string> = {
  signin: "Sign in",
  signup: "Sign up",
  library: "Library",
  transcript: "Transcript",
  clips: "Clips",
  search: "Search",
  keys: "Keys",
  balance: "Balance",
  admin: "Admin",
  missing: "Not found"
}

const App = () => {
  const route = useRoute()
  const [session, setSession] = useState<WebSession | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)

  const load = () => {
    setError(undefined)
    loadSession().then(setSession, setError)
  }
  useEffect(() => {
    load()
    onSessionEnded(load)
  }, [])
  useEffect(() => {
    document.title = `${titles[route.page]} · Verbatim`
  }, [route.page])
  useEffect(() => {
    // Signed in on the sign-in page: on to the library. Signed out elsewhere: to sign-in.
    if (session === undefined) return
    if (session.signed_in && (route.page === "signin" || route.page === "signup")) navigate("#/library")
    if (!session.signed_in && route.page !== "signin" && route.page !== "signup") navigate("#/signin")
  }, [session, route.page])

  if (error !== undefined) {
    return (
      <main class="content">
        <ErrorNote error={error} />
        <button type="button" onClick={load}>Try again</button>
      </main>
    )
  }
  if (session === undefined) return <main class="content"><Busy label="Loading Verbatim" /></main>
  if (!session.signed_in) {
    return (
      <main class="content">
        <p class="brand-line">Verbatim</p>
        <SignInPage
          mode={route.page === "signup" ? "signup" : "signin"}
          invite={route.page === "signup" ? route.invite : undefined}
          onSignedIn={setSession}
        />
      </main>
    )
  }
  return (
    <>
      {/* Not an in-page anchor: the hash belongs to the router. */}
      <button type="button" class="skip" onClick={() => document.getElementById("main")?.focus()}>Skip to content</button>
      <Nav session={session} route={route} onSignedOut={load} />
      <main class="content" id="main" tabIndex={-1}>
        <Page route={route} session={session} />
      </main>
    </>
  )
}

const root = document.getElementById("app")
if (root !== null) {
  root.textContent = ""
  render(<App />, root)
}
