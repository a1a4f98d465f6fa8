/**
 * `verbatim serve` with the stand-in speech pipeline (test/support/standInPipeline.ts), as
 * a process of its own: for tests that must kill and restart the process that runs a job
 * (a run that crashes its process every time). Configuration from the environment, like
 * the real entry point; prints the same `listening` line.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { announce, ServerLayer } from "../../../layers/App.ts"
import * as Configuration from "../../../services/config/Configuration.ts"
import { AppLogger } from "../../../services/observability/AppLogger.ts"
import { makeStandIn } from "../../support/standInPipeline.ts"

const standIn = makeStandIn({ delayMs: 200, steps: 2 })

NodeRuntime.runMain(
  Layer.launch(
    Layer.effectDiscard(announce).pipe(
      Layer.provideMerge(ServerLayer),
      Layer.provide(standIn.layer),
      Layer.provide(AppLogger.layer),
      Layer.provide(Configuration.layer)
    )
  )
)
