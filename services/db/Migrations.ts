/**
 * Versioned schema migrations, run at start inside one transaction that holds an
 * exclusive lock on the migrations table, so several processes starting together on one
 * Postgres apply each migration exactly once.
 */
import { Layer } from "effect"
import * as Migrator from "effect/sql/Migrator"
import foundation from "./migrations/0001_foundation.ts"
import jobs from "./migrations/0002_jobs.ts"
import webhookSecrets from "./migrations/0003_webhook_secrets.ts"
import billing from "./migrations/0004_billing.ts"
import tasks from "./migrations/0005_tasks.ts"
import search from "./migrations/0006_search.ts"
import clips from "./migrations/0007_clips.ts"
import speakersInsights from "./migrations/0008_speakers_insights.ts"
import purchaseIndex from "./migrations/0009_purchase_index.ts"
import mediaTypeDeleted from "./migrations/0010_media_type_deleted.ts"
import webhookClaims from "./migrations/0011_webhook_claims.ts"
import people from "./migrations/0012_people.ts"
import speakerNames from "./migrations/0013_speaker_names.ts"
import chat from "./migrations/0014_chat.ts"
import speakerHints from "./migrations/0016_speaker_hints.ts"
import jobPromptTask from "./migrations/0015_job_prompt_task.ts"
import taskPayloads from "./migrations/0018_task_payloads.ts"
import eventOrderMediaRunners from "./migrations/0019_event_order_media_runners.ts"
import taskProgress from "./migrations/0020_task_progress.ts"
import webhookTasks from "./migrations/0021_webhook_tasks.ts"
import searchLanguage from "./migrations/0022_search_language.ts"
import hnswBuild from "./migrations/0023_hnsw_build.ts"
import hnswHalfvec from "./migrations/0024_hnsw_halfvec.ts"
import hnswBit from "./migrations/0025_hnsw_bit.ts"

const run = Migrator.make({})

export const migrations = Migrator.fromRecord({
  "0001_foundation": foundation,
  "0002_jobs": jobs,
  "0003_webhook_secrets": webhookSecrets,
  "0004_billing": billing,
  "0005_tasks": tasks,
  "0006_search": search,
  "0007_clips": clips,
  "0008_speakers_insights": speakersInsights,
  "0009_purchase_index": purchaseIndex,
  "0010_media_type_deleted": mediaTypeDeleted,
  "0011_webhook_claims": webhookClaims,
  "0012_people": people,
  "0013_speaker_names": speakerNames,
  "0014_chat": chat,
  "0015_job_prompt_task": jobPromptTask,
  "0016_speaker_hints": speakerHints,
  "0018_task_payloads": taskPayloads,
  "0019_event_order_media_runners": eventOrderMediaRunners,
  "0020_task_progress": taskProgress,
  "0021_webhook_tasks": webhookTasks,
  "0022_search_language": searchLanguage,
  "0023_hnsw_build": hnswBuild,
  "0024_hnsw_halfvec": hnswHalfvec,
  "0025_hnsw_bit": hnswBit
})

export const MigrationsLayer = Layer.effectDiscard(run({ loader: migrations, table: "verbatim_migrations" }))
