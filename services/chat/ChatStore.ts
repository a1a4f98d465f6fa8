/**
 * The `chat_messages` table (migration 0014): each question a signed-in person asked about a
 * job, with the moments and the written answer it got, per job and account. One Schema is the
 * stored moment and the API's (`ChatMoment`).
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { ChatMessage, ChatMoment } from "../../src/contract/api/ChatApi.ts"
import type { AccountId, JobId } from "../../src/contract/domain/Ids.ts"

const Row = Schema.Struct({
  id: Schema.String,
  question: Schema.String,
  answer: Schema.NullOr(Schema.String),
  moments: Schema.Union([Schema.Array(ChatMoment), Schema.fromJsonString(Schema.Array(ChatMoment))]),
  created_at: Schema.Date
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(Row))

const toMessage = (row: typeof Row.Type): ChatMessage => ({
  id: row.id,
  question: row.question,
  answer: row.answer,
  moments: row.moments,
  created_at: Math.floor(row.created_at.getTime() / 1000)
})

export class ChatStore extends Context.Service<ChatStore, {
  /** `at` orders the conversation (the message's `created_at` is whole seconds). */
  add(jobId: JobId, accountId: AccountId, message: ChatMessage, at: Date): Effect.Effect<void>
  /** The account's messages about the job, oldest first. */
  list(jobId: JobId, accountId: AccountId): Effect.Effect<ReadonlyArray<ChatMessage>>
}>()("verbatim/chat/ChatStore") {
  static readonly layer = Layer.effect(
    ChatStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const add = Effect.fn("ChatStore.add")(function*(jobId: JobId, accountId: AccountId, message: ChatMessage, at: Date) {
        yield* sql`INSERT INTO chat_messages (id, job_id, account_id, question, answer, moments, created_at)
          VALUES (${message.id}, ${jobId}, ${accountId}, ${message.question}, ${message.answer},
            ${JSON.stringify(message.moments)}::jsonb, ${at})`.pipe(Effect.orDie)
      })

      const list = Effect.fn("ChatStore.list")(function*(jobId: JobId, accountId: AccountId) {
        const rows = yield* sql`SELECT id, question, answer, moments, created_at FROM chat_messages
          WHERE job_id = ${jobId} AND account_id = ${accountId} ORDER BY created_at, id`.pipe(Effect.orDie)
        return (yield* decodeRows(rows).pipe(Effect.orDie)).map(toMessage)
      })

      return ChatStore.of({ add, list })
    })
  )
}
