// The browser tests' shared harness: dist/ served over HTTP, Debian's
// Chromium driven by playwright-core, and the CLI the page is compared with.
// Used by every e2e/*.test.mjs.

import { spawnSync } from "node:child_process";
import { createServer } from "node:http";
import { readFileSync, existsSync, mkdirSync, statSync, mkdtempSync } from "node:fs";
import { join, extname, dirname } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const DIST = join(ROOT, process.env.MICROARENA_DIST ?? "dist");
export const SHOTS = join(ROOT, "e2e", "screenshots");
export const TMP = mkdtempSync(join(tmpdir(), "microarena-e2e-"));
export const CORPUS = process.env.MICROARENA_CORPUS
  ? join(ROOT, process.env.MICROARENA_CORPUS, "models")
  : null;
// The app opens on the measured Cortex-M target (the CLI's default is x86_64).
export const APP_TARGET = "cortex-m";
// The app as a static site under a sub-path (GitHub Pages style): /microarena/…
export const SUBPATH = "/microarena/";
// Every path the server was asked for, so a test can check where the page looked.
export const requested = [];
export const EXAMPLE = "mobilenet_v1_025_96_int8.tflite";
mkdirSync(SHOTS, { recursive: true });

const MIME = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".wasm": "application/wasm" };

export function cli(...args) {
  const bin = join(ROOT, "target", "release", "microarena");
  const opts = { cwd: ROOT, encoding: "utf8", maxBuffer: 1 << 28 };
  const r = existsSync(bin)
    ? spawnSync(bin, args, opts)
    : spawnSync("cargo", ["run", "-q", "--release", "-p", "microarena-cli", "--", ...args], opts);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function planJson(file, ...extra) {
  const target = extra.includes("--target") ? [] : ["--target", APP_TARGET];
  const r = cli("plan", file, "--json", ...target, ...extra);
  return r.code === 0 ? { text: r.stdout, json: JSON.parse(r.stdout) } : null;
}

// Runs an example program of a workspace crate (`cargo run -p PKG --example NAME -- ARGS…`).
export function runExample(pkg, name, ...args) {
  const helper = join(ROOT, "target", "release", "examples", name);
  const r = existsSync(helper)
    ? spawnSync(helper, args, { encoding: "utf8" })
    : spawnSync("cargo", ["run", "-q", "--release", "-p", pkg, "--example", name, "--", ...args],
      { cwd: ROOT, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${name} ${args.join(" ")}: ${r.stderr}`);
}

// A builder model from core's examples (`cargo run --example NAME -- ARGS… OUT`).
export const coreExample = (name, ...args) => runExample("microarena-core", name, ...args);

// The bundled example, written by the CLI (the same bytes the page generates).
export function exampleFile(name = "example.tflite", ...extra) {
  const file = join(TMP, name);
  if (!existsSync(file)) {
    const r = cli("example", ...extra, "-o", file);
    if (r.code !== 0) throw new Error(r.stderr);
  }
  return file;
}

// Serves dist/ (also under SUBPATH, as a static host would; /_models/NAME from TMP, for
// ?model=URL) and starts Chromium.
export async function start() {
  if (!existsSync(join(DIST, "index.html"))) throw new Error("dist/ is missing: run scripts/build-web.sh");
  const server = createServer((req, res) => {
    let path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    requested.push(path);
    if (path.startsWith(SUBPATH)) path = "/" + path.slice(SUBPATH.length);
    const root = path.startsWith("/_models/") ? TMP : DIST;
    const file = root === TMP ? join(TMP, path.slice("/_models/".length)) : join(DIST, path === "/" ? "index.html" : path);
    if (!file.startsWith(root) || !existsSync(file) || statSync(file).isDirectory()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": MIME[extname(file)] ?? "application/octet-stream" });
    res.end(readFileSync(file));
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const base = `http://127.0.0.1:${server.address().port}/`;
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
      "--no-first-run", "--disable-sync", "--disable-quic"],
  });
  return {
    base,
    browser,
    // A fresh context and page; `problems` collects page errors and console errors.
    async newPage(url = base, options = {}) {
      const context = await browser.newContext({ viewport: { width: 1440, height: 1000 }, acceptDownloads: true, ...options });
      const page = await context.newPage();
      const problems = [];
      page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
      page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
      await page.goto(url);
      return { page, problems, close: () => context.close() };
    },
    async stop() {
      await browser.close();
      server.close();
    },
  };
}

export async function waitForMap(page, file, timeout = 30000) {
  await page.waitForSelector(`[data-testid="arena-map"][data-file="${file}"]`, { timeout });
}

// Opens a model through the file input and waits until every view is drawn; returns the
// wall times to the map and to every view, and the app's own (mapMs, renderMs as inApp).
export async function openModel(page, path, name) {
  const before = await page.evaluate(() => window.__microarena?.seq ?? 0);
  const t0 = Date.now();
  await page.setInputFiles('[data-testid="model-input"]', path);
  await waitForMap(page, name);
  const mapWall = Date.now() - t0;
  await page.waitForFunction((prev) => (window.__microarena?.seq ?? 0) !== prev, before, { timeout: 30000 });
  const wall = Date.now() - t0;
  const { renderMs: inApp, mapMs } = await page.evaluate(() => window.__microarena);
  return { wall, inApp, mapWall, mapMs };
}

// data-bytes of a test id, as a number.
export async function bytesOf(page, id) {
  return page.$eval(`[data-testid="${id}"]`, (e) => Number(e.getAttribute("data-bytes")));
}
