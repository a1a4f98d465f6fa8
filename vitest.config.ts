import { defineConfig } from "vitest/config"

// Tests share two cores with the ONNX sessions they start: files run in forked
// processes, two at a time, so a heavy model test never fights a third process.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 120_000
  }
})
