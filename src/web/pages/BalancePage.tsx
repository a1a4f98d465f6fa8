/**
 * Balance and usage: minutes left, used this month, the plan; buy a pack through the pay link
 * (`POST /v1/checkout` → the checkout page in a new tab) and watch its status change by polling
 * `GET /v1/checkout/{id}` until it is paid or expired.
 */
import { useEffect, useState } from "preact/hooks"
import { catalog, sellable, type Sku } from "../../contract/domain/Catalog.ts"
import type { CheckoutView } from "../../contract/api/BillingApi.ts"
import { call } from "../api.ts"
import { Busy, ErrorNote } from "../components/Status.tsx"
import { useLoad } from "../components/useLoad.ts"
import { minutes, when } from "../format.ts"

type Checkout = typeof CheckoutView.Type

const Figures = ({ owner }: { readonly owner: boolean }) => {
  const figures = useLoad(async () => {
    const [me, credits, usage] = await Promise.all([
      call((api) => api.account.me()),
      call((api) => api.billing.credits()),
      call((api) => api.billing.usage())
    ])
    return { me, credits, usage }
  }, [])
  if (figures.error !== undefined) return <ErrorNote error={figures.error} />
  if (figures.data === undefined) return <Busy label="Loading your balance" />
  const { me, credits, usage } = figures.data
  const unlimited = credits.workspace.unlimited_minutes
  const left = unlimited ? "unlimited" : minutes(credits.payg_hours_remaining * 60 + credits.pro_hours_remaining_in_period * 60)
  return (
    <>
    <dl class="figures" aria-live="polite">
      <div>
        <dt>Minutes left</dt>
        <dd data-testid="minutes-left">{left}</dd>
        {owner && <dd class="hint">As the owner, your own use is not held back by the balance.</dd>}
      </div>
      <div><dt>Used this month</dt><dd>{minutes(usage.minutes_month_to_date)}</dd></div>
      <div><dt>Used today</dt><dd>{minutes(usage.minutes_today)}</dd></div>
      <div><dt>Plan</dt><dd>{me.plan?.name ?? "–"}{credits.workspace.period_ends_at !== null && <> until {when(credits.workspace.period_ends_at)}</>}</dd></div>
      <div><dt>Recordings at once</dt><dd>{me.plan?.concurrent_jobs ?? "–"}</dd></div>
      <div><dt>In the queue</dt><dd>{usage.queue_depth}</dd></div>
      <div><dt>Hours transcribed in all</dt><dd>{credits.hours_used_lifetime.toLocaleString(undefined, { maximumFractionDigits: 2 })}</dd></div>
    </dl>
    <h3>Recent charges</h3>
    {usage.recent_charges.length === 0
      ? <p class="muted">Nothing charged or added yet.</p>
      : (
        <table class="ledger" data-testid="recent-charges">
          <thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Minutes</th></tr></thead>
          <tbody>
            {usage.recent_charges.map((entry, i) => (
              <tr key={i}>
                <td>{when(entry.created_at)}</td>
                <td>
                  {ledgerKinds[entry.kind] ?? entry.kind}
                  {entry.kind === "job_charge" && entry.ref !== null && <> · <a href={`#/jobs/${entry.ref}`}>recording</a></>}
                  {entry.note !== null && <> · {entry.note}</>}
                </td>
                <td class="num">{entry.minutes > 0 ? "+" : ""}{entry.minutes.toLocaleString(undefined, { maximumFractionDigits: 2 })}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  )
}

const ledgerKinds: Record<string, string> = {
  job_charge: "Transcription",
  clip_charge: "Clip render",
  clip_refund: "Clip refund",
  purchase: "Pack bought",
  plan_period: "Plan period",
  grant: "Credit added"
}

const CheckoutStatus = ({ checkout, onPaid }: { readonly checkout: Checkout; readonly onPaid: () => void }) => {
  const [current, setCurrent] = useState(checkout)
  const [error, setError] = useState<unknown>(undefined)
  useEffect(() => {
    setCurrent(checkout)
  }, [checkout.id])
  useEffect(() => {
    if (current.status !== "pending") {
      if (current.status === "paid") onPaid()
      return
    }
    const timer = setInterval(() => {
      call((api) => api.billing.checkoutStatus({ params: { id: current.id } }))
        .then((next) => {
          setError(undefined)
          setCurrent(next)
        })
        .catch(setError)
    }, 3000)
    return () => clearInterval(timer)
  }, [current.id, current.status])
  return (
    <div class="checkout" data-testid="checkout">
      <p>
        {catalog[current.sku as Sku]?.name ?? current.sku}: ${current.amount_usd} ·{" "}
        <strong class={`status status-${current.status}`} data-testid="checkout-status">{current.status}</strong>
      </p>
      <p class="hint">Pay link id <code data-testid="checkout-id">{current.id}</code></p>
      {current.status === "pending" && (
        <>
          <p><a href={current.checkout_url} target="_blank" rel="noopener">Open the pay link</a> (valid until {when(current.expires_at)})</p>
          <Busy label="Waiting for the payment" />
        </>
      )}
      {current.status === "paid" && <p class="ok">Paid: the minutes are on your balance.</p>}
      {current.status === "expired" && <p class="muted">This pay link expired; open a new one.</p>}
      <ErrorNote error={error} />
    </div>
  )
}

export const BalancePage = ({ owner }: { readonly owner: boolean }) => {
  const [checkout, setCheckout] = useState<Checkout | undefined>(undefined)
  const [busy, setBusy] = useState<Sku | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  const [refresh, setRefresh] = useState(0)
  const buy = async (sku: Sku) => {
    setBusy(sku)
    setError(undefined)
    // Opened before the call so that the browser does not treat it as an unrequested pop-up.
    const tab = window.open("about:blank", "_blank")
    try {
      const opened = await call((api) => api.billing.checkout({ payload: { sku } }))
      setCheckout(opened)
      if (tab !== null) tab.location.href = opened.checkout_url
    } catch (failure) {
      tab?.close()
      setError(failure)
    } finally {
      setBusy(undefined)
    }
  }
  return (
    <>
      <section class="card" aria-labelledby="balance-title">
        <h2 id="balance-title">Balance and usage</h2>
        <Figures key={refresh} owner={owner} />
      </section>
      <section class="card" aria-labelledby="buy-title">
        <h2 id="buy-title">Buy minutes</h2>
        <ul class="products">
          {sellable.map((sku) => (
            <li key={sku}>
              <span>{catalog[sku].name}</span>
              <button type="button" disabled={busy !== undefined} onClick={() => buy(sku)}>
                Buy for ${catalog[sku].amountUsd}
              </button>
            </li>
          ))}
        </ul>
        {busy !== undefined && <Busy label="Opening the pay link" />}
        <ErrorNote error={error} />
        {checkout !== undefined && <CheckoutStatus checkout={checkout} onPaid={() => setRefresh((n) => n + 1)} />}
      </section>
    </>
  )
}
