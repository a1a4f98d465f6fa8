/** The domain services on the test file's own storage, for service-level tests. */
import { Layer } from "effect"
import { DomainLayer } from "../../layers/App.ts"
import { testStorageConfig } from "./database.ts"

export const domainTestLayer = (label: string) => DomainLayer.pipe(Layer.provideMerge(testStorageConfig(label)))
