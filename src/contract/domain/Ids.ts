/** Branded identifiers. Every id that crosses a service boundary carries its brand. */
import { Schema } from "effect"

const Uuid = Schema.String.check(Schema.isUUID())

export const AccountId = Uuid.pipe(Schema.brand("AccountId"))
export type AccountId = typeof AccountId.Type

export const ApiKeyId = Uuid.pipe(Schema.brand("ApiKeyId"))
export type ApiKeyId = typeof ApiKeyId.Type

export const JobId = Uuid.pipe(Schema.brand("JobId"))
export type JobId = typeof JobId.Type
