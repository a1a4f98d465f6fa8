/** The domain services on the test file's own storage, for service-level tests. */
import { Effect, Layer } from "effect"
import { DomainLayer } from "../../layers/App.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { makeTestStorage } from "./database.ts"

export const domainTestLayer = (label: string) =>
  Layer.unwrap(
    Effect.map(
      Effect.acquireRelease(
        Effect.promise(() => makeTestStorage(label)),
        (storage) => Effect.promise(() => storage.dispose())
      ),
      (storage) =>
        DomainLayer.pipe(
          Layer.provideMerge(AppConfig.layerWith({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl }))
        )
    )
  )
