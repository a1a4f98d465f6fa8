#!/usr/bin/env node
// `npx verbatim …`: the TypeScript entry point runs directly on Node 24 (type stripping).
import "../src/main.ts"
