/**
 * A transcription job as a cluster entity ("actor"): the entity id is the job id, and its
 * one message, `Process`, asks the job to make progress. The message is persisted, so it
 * survives a crash of the runner that held it and is delivered again by whichever runner
 * owns the job's shard next; `JobProcessor.process` is idempotent, which makes that safe.
 *
 * Messages of one job run one after another (entity concurrency 1): two `Process` messages
 * for the same job, from a retry and the start-up reconciler say, never run at once in the
 * cluster. Different jobs run in parallel, bounded by the process's `WorkerPool`. A request
 * fiber is forked per message by the entity's server, so a long run holds up nothing but
 * later messages of the same job — which is the serialisation we want. (`Rpc.fork` would
 * exempt the handler from that concurrency limit and let duplicates overlap.)
 */
import { Effect, Schema } from "effect"
import { ClusterSchema, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { JobId } from "../../src/contract/domain/Ids.ts"
import { JobProcessor } from "./JobProcessor.ts"
import { WorkerPool } from "./WorkerPool.ts"

export const Process = Rpc.make("Process")
  // Stored in the message table before the sender goes on; replayed after a crash.
  .annotate(ClusterSchema.Persisted, true)
  // A run cannot finish within the termination grace period (minutes of audio), so when
  // the shard moves to another runner (re-balancing after a runner joins) the run is
  // interrupted at once and the message left unanswered for the new owner, instead of
  // holding the hand-off up for `entityTerminationTimeout` (15 s) and being cut off then.
  // (A runner shutting down forces its entities to stop anyway; the message is replayed
  // the same way.)
  .annotate(ClusterSchema.InterruptOnTermination, true)

export const JobEntity = Entity.make("Job", [Process])

const decodeJobId = Schema.decodeUnknownEffect(JobId)

/** An idle job entity holds nothing worth keeping: passivate it soon after its last run. */
export const jobEntityMaxIdleTime = "30 seconds"

/** Registers the `Job` entity on this runner; requires `Sharding`, `JobProcessor`, `WorkerPool`. */
export const JobEntityLayer = JobEntity.toLayer(
  Effect.gen(function*() {
    const processor = yield* JobProcessor
    const pool = yield* WorkerPool
    const address = yield* Entity.CurrentAddress
    const entityId = address.entityId
    const jobId = yield* decodeJobId(entityId).pipe(Effect.option)

    return JobEntity.of({
      Process: () =>
        jobId._tag === "Some"
          ? pool.run(entityId, processor.process(jobId.value))
          // Nobody can dispatch such an id through `JobDispatcher`; answer it so it is not replayed forever.
          : Effect.logError("Process message for an entity id that is not a job id; dropped", entityId)
    })
  }),
  { maxIdleTime: jobEntityMaxIdleTime, concurrency: 1 }
)
