/**
 * The owner's Admin page: what the admin CLI does, in the browser — accounts with their plan,
 * API access and balance; change a plan, grant API access, add credit, confirm a pay link
 * (paid outside the built-in provider), create an account, invite a person.
 */
import { useState } from "preact/hooks"
import { AccountId } from "../../contract/domain/Ids.ts"
import { PlanId, plans } from "../../contract/domain/Plan.ts"
import type { AdminAccount } from "../../contract/domain/People.ts"
import { call } from "../api.ts"
import { Busy, ErrorNote } from "../components/Status.tsx"
import { useAction } from "../components/useAction.ts"
import { useLoad } from "../components/useLoad.ts"
import { minutes, when } from "../format.ts"

type Act = (label: string, action: () => Promise<string | void>) => Promise<void>

/** A form's submit handler: the page stays, and `action` runs as `label` (its message shown when done). */
const submitting = (act: Act, label: string, action: () => Promise<string | void>) => (event: Event) => {
  event.preventDefault()
  void act(label, action)
}

const AccountRow = ({ account, act }: { readonly account: AdminAccount; readonly act: Act }) => {
  const [plan, setPlan] = useState<PlanId>(account.plan)
  const [credit, setCredit] = useState("")
  const id = AccountId.make(account.account_id)
  return (
    <li class="account" data-account-id={id}>
      <div class="job-main">
        <span class="name">{account.email}</span>
        <span class="muted">
          {account.role}
          {account.signed_up ? "" : " · no password yet"} · {account.api_access ? "API access" : "no API access"} ·{" "}
          {minutes(account.balance_minutes)} · since {when(account.created_at)}
          {account.plan_expires_at !== null && <> · plan until {when(account.plan_expires_at)}</>}
        </span>
      </div>
      <div class="row wrap">
        <label class="inline-label">
          Plan{" "}
          <select value={plan} onChange={(e) => setPlan(e.currentTarget.value as PlanId)}>
            {PlanId.literals.map((option) => <option key={option} value={option}>{plans[option].name}</option>)}
          </select>
        </label>
        <button
          type="button"
          disabled={plan === account.plan}
          onClick={() => act("Changing the plan", () => call((api) => api.webAdmin.setPlan({ params: { id }, payload: { plan } })).then(() => "Plan changed."))}
        >
          Save plan
        </button>
        {!account.api_access && (
          <button
            type="button"
            onClick={() => act("Granting API access", () => call((api) => api.webAdmin.grantAccess({ params: { id } })).then(() => "API access granted."))}
          >
            Grant API access
          </button>
        )}
        <form
          class="row"
          onSubmit={submitting(act, "Adding credit", () =>
            call((api) => api.webAdmin.grantCredits({ params: { id }, payload: { minutes: Number(credit) } })).then((granted) => {
              setCredit("")
              return `Balance now ${minutes(granted.balance_minutes)}; ${granted.unlocked_jobs} locked transcript(s) unlocked.`
            }))}
        >
          <label class="inline-label">
            Minutes{" "}
            <input type="number" min={1} step="any" required value={credit} onInput={(e) => setCredit(e.currentTarget.value)} class="short" />
          </label>
          <button type="submit">Add credit</button>
        </form>
      </div>
    </li>
  )
}

export const AdminPage = () => {
  const list = useLoad(() => call((api) => api.webAdmin.accounts()), [])
  const { busy, error, run } = useAction<string>()
  const [done, setDone] = useState<string | undefined>(undefined)
  const [newEmail, setNewEmail] = useState("")
  const [newAccess, setNewAccess] = useState(false)
  const [inviteEmail, setInviteEmail] = useState("")
  const [inviteUrl, setInviteUrl] = useState<string | undefined>(undefined)
  const [checkoutId, setCheckoutId] = useState("")

  const act: Act = (label, action) =>
    run(label, async () => {
      setDone(undefined)
      const message = await action()
      if (typeof message === "string") setDone(message)
      await list.reload()
    })

  return (
    <>
      <section class="card" aria-labelledby="admin-title">
        <h2 id="admin-title">Accounts</h2>
        {busy !== undefined && <Busy label={busy} />}
        {done !== undefined && <p class="ok" role="status">{done}</p>}
        <ErrorNote error={error} />
        <ErrorNote error={list.error} />
        {list.loading && list.data === undefined && <Busy label="Loading accounts" />}
        {list.data !== undefined && (
          <ul class="accounts">{list.data.accounts.map((account) => <AccountRow key={account.account_id} account={account} act={act} />)}</ul>
        )}
      </section>
      <section class="card" aria-labelledby="invite-title">
        <h2 id="invite-title">Invite a person</h2>
        <form
          class="row"
          onSubmit={submitting(act, "Creating the invite", async () => {
            const invite = await call((api) => api.webAdmin.invite({ payload: { email: inviteEmail.trim() } }))
            setInviteUrl(invite.invite_url)
            setInviteEmail("")
            return `Invite for ${invite.email}, valid until ${when(invite.expires_at)}.`
          })}
        >
          <label for="invite-email">Email</label>
          <input id="invite-email" type="email" required value={inviteEmail} onInput={(e) => setInviteEmail(e.currentTarget.value)} />
          <button type="submit" class="primary">Invite</button>
        </form>
        {inviteUrl !== undefined && (
          <p>Send this link (one use): <code class="key" data-testid="invite-url">{inviteUrl}</code></p>
        )}
      </section>
      <section class="card" aria-labelledby="create-title">
        <h2 id="create-title">Create an account</h2>
        <form
          class="row wrap"
          onSubmit={submitting(act, "Creating the account", async () => {
            await call((api) => api.webAdmin.createAccount({ payload: { email: newEmail.trim(), api_access: newAccess } }))
            setNewEmail("")
            return "Account created. Invite its email so the person can set a password."
          })}
        >
          <label for="new-email">Email</label>
          <input id="new-email" type="email" required value={newEmail} onInput={(e) => setNewEmail(e.currentTarget.value)} />
          <label class="inline-label">
            <input type="checkbox" checked={newAccess} onChange={(e) => setNewAccess(e.currentTarget.checked)} /> API access
          </label>
          <button type="submit">Create</button>
        </form>
      </section>
      <section class="card" aria-labelledby="confirm-title">
        <h2 id="confirm-title">Confirm a pay link</h2>
        <p class="muted">When a pay link was paid another way, confirm it here to credit its account.</p>
        <form
          class="row"
          onSubmit={submitting(act, "Confirming the payment", async () => {
            const confirmed = await call((api) => api.webAdmin.confirmCheckout({ params: { id: checkoutId.trim() } }))
            setCheckoutId("")
            return confirmed.already_paid ? "That pay link was already paid." : `Paid: ${confirmed.minutes} minutes credited.`
          })}
        >
          <label for="checkout-id">Pay link id</label>
          <input id="checkout-id" required value={checkoutId} onInput={(e) => setCheckoutId(e.currentTarget.value)} />
          <button type="submit">Confirm paid</button>
        </form>
      </section>
    </>
  )
}
