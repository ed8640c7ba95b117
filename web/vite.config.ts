/// <reference types="vitest/config" />
/// <reference types="node" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";
import { fileURLToPath } from "node:url";
import { sdkFirstSeenPatch } from "./src/lib/sdkPatch.ts";

// The build is committed inside the Python package, so `pip install orecast` needs no Node.
const outDir = fileURLToPath(new URL("../src/orecast/service/static", import.meta.url));
// `npm run dev` proxies the API to a running `orecast serve` (ORECAST_URL, default :8000).
const api = process.env.ORECAST_URL ?? "http://127.0.0.1:8000";
// useStream's history lookup, made linear (src/lib/firstSeen.ts); the dev server pre-bundles the SDK.
const firstSeen = fileURLToPath(new URL("./src/lib/firstSeen.ts", import.meta.url));
const apiPaths = ["/threads", "/runs", "/assistants", "/store", "/info", "/ok", "/health", "/agent", "/reports", "/ops"];

export default defineConfig({
  base: "./",
  plugins: [react(), { ...sdkFirstSeenPatch(firstSeen, true), apply: "build" }],
  optimizeDeps: { rolldownOptions: { plugins: [sdkFirstSeenPatch(firstSeen, false)] } },
  build: { outDir, emptyOutDir: true, chunkSizeWarningLimit: 1500, sourcemap: false },
  server: { proxy: Object.fromEntries(apiPaths.map((p) => [p, { target: api, changeOrigin: true }])) },
  test: { environment: "node", include: ["src/**/*.test.ts"] },
});
