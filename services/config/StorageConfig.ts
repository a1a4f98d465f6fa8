/** What this process keeps on disk: the data dir (embedded database, key file) and the media directory. */
import { Config } from "effect"
import { positiveInt } from "./readers.ts"
import * as Setting from "./Setting.ts"

const fields = {
  dataDir: Setting.setting({
    env: "VERBATIM_DATA_DIR",
    read: Config.NonEmptyString,
    fallback: "./data",
    doc: "where the embedded database (`pg/`) and stored media live"
  }),
  mediaDir: Setting.optional({
    env: "VERBATIM_MEDIA_DIR",
    read: Config.NonEmptyString,
    shown: "`<data dir>/media`",
    doc: "where uploads, audio and clips are stored; with several processes on one Postgres, one directory every " +
      "process mounts (a process that cannot see the others' files refuses to start; see \"Several processes or " +
      "machines on one Postgres\")"
  }),
  uploadOrphanSeconds: Setting.setting({
    env: "VERBATIM_UPLOAD_ORPHAN_SECONDS",
    read: positiveInt,
    fallback: 3600,
    doc: "upload temporaries and media folders with no job or ticket are removed once idle this long"
  })
}

export class StorageConfig extends Setting.Area<StorageConfig>()("verbatim/config/StorageConfig", fields) {}
