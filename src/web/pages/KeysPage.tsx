/**
 * The key panel: create (the secret shown once, with a copy button), list, rotate (the old key
 * keeps working 24 hours — its end is shown), revoke. The 10-key limit and the API-access rule
 * come from the service; its refusal is shown with its pay or upgrade link.
 */
import { useState } from "preact/hooks"
import type { KeyView } from "../../contract/domain/People.ts"
import { call } from "../api.ts"
import { Busy, ErrorNote } from "../components/Status.tsx"
import { useAction } from "../components/useAction.ts"
import { useLoad } from "../components/useLoad.ts"
import { when } from "../format.ts"

interface Shown {
  readonly key: string
  readonly name: string | null
  /** For a rotation: until when the replaced key still works. */
  readonly replacedUntil?: string
}

const CopyButton = ({ text }: { readonly text: string }) => {
  const [copied, setCopied] = useState<"no" | "yes" | "failed">("no")
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      setCopied("yes")
    } catch {
      setCopied("failed")
    }
  }
  return (
    <>
      <button type="button" onClick={copy}>Copy</button>
      <span role="status" aria-live="polite" class="muted">
        {copied === "yes" ? " Copied." : copied === "failed" ? " Copying was not allowed: select the key and copy it." : ""}
      </span>
    </>
  )
}

const NewSecret = ({ shown, onDone }: { readonly shown: Shown; readonly onDone: () => void }) => (
  <div class="secret" role="region" aria-label="New key">
    <p><strong>Your new key{shown.name !== null ? <> “{shown.name}”</> : null}.</strong> It is shown only now: store it somewhere safe.</p>
    <p class="row">
      <code class="key" data-testid="new-key">{shown.key}</code>
      <CopyButton text={shown.key} />
    </p>
    {shown.replacedUntil !== undefined && (
      <p>The key it replaces keeps working until {when(shown.replacedUntil)} (24 hours), so you can switch over.</p>
    )}
    <button type="button" onClick={onDone}>I stored it</button>
  </div>
)

export const KeysPage = () => {
  const list = useLoad(() => call((api) => api.webAccount.keys()), [])
  const [name, setName] = useState("")
  const { busy, error, run } = useAction<string>()
  const [shown, setShown] = useState<Shown | undefined>(undefined)

  const act = (label: string, action: () => Promise<void>) =>
    run(label, async () => {
      await action()
      await list.reload()
    })
  const create = (event: Event) => {
    event.preventDefault()
    void act("Creating the key", async () => {
      const trimmed = name.trim()
      const made = await call((api) => api.webAccount.createKey({ payload: trimmed === "" ? {} : { name: trimmed } }))
      setShown({ key: made.key, name: made.name })
      setName("")
    })
  }
  const rotate = (key: KeyView) =>
    act("Rotating the key", async () => {
      const made = await call((api) => api.webAccount.rotateKey({ params: { id: key.id } }))
      setShown({ key: made.key, name: made.name, replacedUntil: made.replaced_key_expires_at })
    })
  const revoke = (key: KeyView) => {
    if (!confirm(`Revoke ${key.name ?? key.prefix}? Programs using it stop working at once.`)) return
    void act("Revoking the key", async () => {
      await call((api) => api.webAccount.revokeKey({ params: { id: key.id } }))
    })
  }

  const active = list.data?.keys.filter((key) => key.status === "active" || key.status === "rotating").length ?? 0
  return (
    <section class="card" aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <p class="muted">
        Keys let your programs call the API (<a href="/docs" target="_blank" rel="noopener">reference</a>). They are for servers
        and scripts: browsers are refused.
        {list.data !== undefined && <> You have {active} of {list.data.limit} active keys.</>}
      </p>
      {shown !== undefined && <NewSecret shown={shown} onDone={() => setShown(undefined)} />}
      <form class="row" onSubmit={create}>
        <label for="key-name">Name (optional)</label>
        <input id="key-name" maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="e.g. backup script" />
        <button type="submit" class="primary" disabled={busy !== undefined}>Create key</button>
      </form>
      {busy !== undefined && <Busy label={busy} />}
      <ErrorNote error={error} />
      <ErrorNote error={list.error} />
      {list.loading && list.data === undefined && <Busy label="Loading your keys" />}
      {list.data !== undefined && list.data.keys.length === 0 && <p class="muted">No keys yet.</p>}
      {list.data !== undefined && list.data.keys.length > 0 && (
        <div class="table-wrap">
          <table class="keys">
            <thead>
              <tr><th>Name</th><th>Prefix</th><th>Created</th><th>Last used</th><th>Status</th><th><span class="visually-hidden">Actions</span></th></tr>
            </thead>
            <tbody>
              {list.data.keys.map((key) => (
                <tr key={key.id} data-key-id={key.id}>
                  <td data-label="Name">{key.name ?? "–"}</td>
                  <td data-label="Prefix"><code>{key.prefix}…</code></td>
                  <td data-label="Created">{when(key.created_at)}</td>
                  <td data-label="Last used">{key.last_used_at === null ? "never" : when(key.last_used_at)}</td>
                  <td data-label="Status">
                    <span class={`status status-${key.status}`}>{key.status}</span>
                    {key.expires_at !== null && key.status !== "revoked" && <> until {when(key.expires_at)}</>}
                  </td>
                  <td class="actions">
                    {key.status === "active" && (
                      <button type="button" onClick={() => rotate(key)} aria-label={`Rotate ${key.name ?? key.prefix}`}>Rotate</button>
                    )}
                    {(key.status === "active" || key.status === "rotating") && (
                      <button type="button" class="danger" onClick={() => revoke(key)} aria-label={`Revoke ${key.name ?? key.prefix}`}>
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}
