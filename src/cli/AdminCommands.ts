/**
 * `verbatim admin …`: the operator's tools for accounts, keys, plans and credit, the
 * same actions as the website's Admin page, for a shell or a script. Output is JSON so it
 * reads well and scripts can parse it; a key's secret is printed exactly once, at
 * creation or rotation.
 */
import { Console, Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { Accounts } from "../../services/Accounts.ts"
import { ApiKeys, keyStatus } from "../../services/ApiKeys.ts"
import { Billing } from "../../services/billing/Billing.ts"
import { checkoutConfirmation, Checkouts } from "../../services/billing/Checkouts.ts"
import { JobEvents } from "../../services/jobs/JobEvents.ts"
import { SearchReindex } from "../../services/search-index/SearchReindex.ts"
import type { ApiKeyRecord } from "../contract/domain/ApiKey.ts"
import { PlanId } from "../contract/domain/Plan.ts"

const account = Flag.String("email").pipe(
  Flag.withDescription("The account: its email (or its id)")
)

const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

const keyView = (key: ApiKeyRecord, now: number) => ({
  id: key.id,
  prefix: key.prefix,
  name: key.name,
  status: keyStatus(key, now),
  created_at: key.created_at.toISOString(),
  expires_at: key.expires_at?.toISOString() ?? null,
  revoked_at: key.revoked_at?.toISOString() ?? null,
  last_used_at: key.last_used_at?.toISOString() ?? null
})

const accountCreate = Command.make(
  "create",
  {
    email: Flag.String("email").pipe(Flag.withDescription("Email of the new account")),
    apiAccess: Flag.Boolean("api-access").pipe(
      Flag.withDescription("Allow API keys now (otherwise they come with the 5,000-minute pack or Workspace)"),
      Flag.withDefault(false)
    )
  },
  Effect.fn(function*({ email, apiAccess }) {
    const accounts = yield* Accounts
    const created = yield* accounts.create(email)
    const account = apiAccess ? yield* accounts.grantApiAccess(created.id) : created
    yield* printJson({ id: account.id, email: account.email, plan: account.plan, api_access: account.api_access })
  })
).pipe(Command.withDescription("Create an account"))

const keyCreate = Command.make(
  "create",
  { account, name: Flag.String("name").pipe(Flag.withDescription("A label for the key"), Flag.optional) },
  Effect.fn(function*({ account, name }) {
    const owner = yield* (yield* Accounts).resolve(account)
    const issued = yield* (yield* ApiKeys).create(owner.id, name._tag === "Some" ? name.value : undefined)
    yield* printJson({
      key: issued.key,
      id: issued.record.id,
      prefix: issued.record.prefix,
      account: owner.email,
      note: "Store this key now: it is shown only once."
    })
  })
).pipe(Command.withDescription("Create an API key (at most 10 active per account)"))

const keyList = Command.make(
  "list",
  { account },
  Effect.fn(function*({ account }) {
    const owner = yield* (yield* Accounts).resolve(account)
    const keys = yield* (yield* ApiKeys).list(owner.id)
    const now = Date.now()
    yield* printJson(keys.map((key) => keyView(key, now)))
  })
).pipe(Command.withDescription("List an account's keys (never their secrets)"))

const keyFlag = Flag.String("key").pipe(Flag.withDescription("The key's id or prefix (as listed)"))

const keyRotate = Command.make(
  "rotate",
  { account, key: keyFlag },
  Effect.fn(function*({ account, key }) {
    const owner = yield* (yield* Accounts).resolve(account)
    const issued = yield* (yield* ApiKeys).rotate(owner.id, key)
    yield* printJson({
      key: issued.key,
      id: issued.record.id,
      prefix: issued.record.prefix,
      note: "The old key keeps working for 24 hours. Store this key now: it is shown only once."
    })
  })
).pipe(Command.withDescription("Replace a key; the old one stays valid for 24 hours"))

const keyRevoke = Command.make(
  "revoke",
  { account, key: keyFlag },
  Effect.fn(function*({ account, key }) {
    const owner = yield* (yield* Accounts).resolve(account)
    const revoked = yield* (yield* ApiKeys).revoke(owner.id, key)
    yield* printJson(keyView(revoked, Date.now()))
  })
).pipe(Command.withDescription("Revoke a key at once"))

const planSet = Command.make(
  "set",
  { account, plan: Flag.Literals("plan", PlanId.literals).pipe(Flag.withDescription("standard, workspace or enterprise")) },
  Effect.fn(function*({ account, plan }) {
    const accounts = yield* Accounts
    const owner = yield* accounts.resolve(account)
    const updated = yield* accounts.setPlan(owner.id, plan)
    yield* printJson({ id: updated.id, email: updated.email, plan: updated.plan })
  })
).pipe(Command.withDescription("Put an account on a plan"))

const creditsGrant = Command.make(
  "grant",
  {
    account,
    minutes: Flag.Finite("minutes").pipe(Flag.withDescription("Minutes of audio to add")),
    note: Flag.String("note").pipe(Flag.optional)
  },
  Effect.fn(function*({ account, minutes, note }) {
    const owner = yield* (yield* Accounts).resolve(account)
    const result = yield* (yield* Billing).grant(owner.id, minutes, note._tag === "Some" ? note.value : undefined)
    yield* printJson({
      account: owner.email,
      granted_minutes: minutes,
      balance_minutes: result.balanceMinutes,
      unlocked_jobs: result.unlocked
    })
  })
).pipe(Command.withDescription("Add minutes to an account's balance"))

const accessGrant = Command.make(
  "grant",
  { account },
  Effect.fn(function*({ account }) {
    const accounts = yield* Accounts
    const owner = yield* accounts.resolve(account)
    const updated = yield* accounts.grantApiAccess(owner.id)
    yield* printJson({ id: updated.id, email: updated.email, api_access: updated.api_access })
  })
).pipe(Command.withDescription("Allow an account to create API keys without a purchase"))

const checkoutConfirm = Command.make(
  "confirm",
  { id: Flag.String("id").pipe(Flag.withDescription("The checkout id (txn_…)")) },
  Effect.fn(function*({ id }) {
    yield* printJson(checkoutConfirmation(yield* (yield* Checkouts).pay(id, "builtin:operator")))
  })
).pipe(Command.withDescription("Confirm a payment received for a pay link (built-in provider); credits once"))

const webhookSecret = Command.make(
  "secret",
  { account },
  Effect.fn(function*({ account }) {
    const owner = yield* (yield* Accounts).resolve(account)
    const secret = yield* (yield* JobEvents).webhookSecret(owner.id)
    yield* printJson({
      account: owner.email,
      webhook_secret: secret,
      note: "Verify webhook-signature with this secret (Standard Webhooks: HMAC-SHA256 of id.timestamp.body)."
    })
  })
).pipe(Command.withDescription("Show (creating on first use) the account's webhook signing secret"))

/** `[#####-----] 12/40 jobs` on stderr, redrawn in place. */
const progressBar = (done: number, total: number) =>
  Effect.sync(() => {
    const width = 30
    const filled = total === 0 ? width : Math.round((done / total) * width)
    process.stderr.write(`\r[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total} jobs${done === total ? "\n" : ""}`)
  })

const searchReindex = Command.make(
  "reindex",
  {},
  Effect.fn(function*() {
    const summary = yield* (yield* SearchReindex).run(progressBar)
    yield* printJson({
      reindexed_jobs: summary.jobs,
      passages: summary.passages,
      seconds: Math.round(summary.seconds * 10) / 10,
      vector_search: summary.vectorSearch
    })
  })
).pipe(Command.withDescription("Index every finished job of every account again for library search (progress on stderr)"))

export const adminCommand = Command.make("admin").pipe(
  Command.withDescription("Operator tools: accounts, API keys, plans, credit"),
  Command.withSubcommands([
    Command.make("account").pipe(Command.withSubcommands([accountCreate])),
    Command.make("access").pipe(Command.withSubcommands([accessGrant])),
    Command.make("key").pipe(Command.withSubcommands([keyCreate, keyList, keyRotate, keyRevoke])),
    Command.make("plan").pipe(Command.withSubcommands([planSet])),
    Command.make("credits").pipe(Command.withSubcommands([creditsGrant])),
    Command.make("checkout").pipe(Command.withSubcommands([checkoutConfirm])),
    Command.make("webhook").pipe(Command.withSubcommands([webhookSecret])),
    Command.make("search").pipe(Command.withSubcommands([searchReindex]))
  ])
)
