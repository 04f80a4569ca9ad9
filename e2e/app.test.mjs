// Browser tests of the web app in dist/ (scripts/build-web.sh), in headless
// Debian Chromium driven by playwright-core. Run: node --test e2e/
// The figures on the page are compared with `microarena plan --json`.
// Corpus models are tested when MICROARENA_CORPUS is set (relative to the repo root).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, existsSync, readdirSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import { DIST, SHOTS, TMP, CORPUS, SUBPATH, requested, cli, planJson, coreExample, start, waitForMap, openModel } from "./harness.mjs";

let h, base;
before(async () => {
  h = await start();
  base = h.base;
});
after(async () => {
  await h?.stop();
});

const newPage = (url = base) => h.newPage(url);

async function shown(page) {
  const bytes = (id) => page.$eval(`[data-testid="${id}"]`, (e) => Number(e.getAttribute("data-bytes")));
  const text = (id) => page.$eval(`[data-testid="${id}"]`, (e) => e.textContent.trim());
  return {
    head: await bytes("arena-head"),
    tail: await bytes("arena-tail"),
    total: await bytes("arena-total"),
    minimum: await bytes("arena-minimum"),
    lower: await bytes("lower-bound"),
    runtime: await bytes("runtime-total"),
    headText: await text("arena-head"),
    peakOp: await page.$eval('[data-testid="peak-op"]', (e) => e.getAttribute("data-op")),
    buffers: await page.$eval('[data-testid="arena-map"]', (e) => Number(e.getAttribute("data-buffers"))),
    rects: await page.$$eval('[data-testid="arena-map"] rect[data-i]:not(.pad)', (r) => r.length),
  };
}

function expected(report) {
  const a = report.arena;
  return {
    head: a.head_bytes, tail: a.tail_bytes, total: a.total_bytes, minimum: a.minimum_bytes,
    lower: a.lower_bound_bytes, headText: String(a.head_bytes),
    runtime: report.runtime ? report.runtime.total_bytes : 0,
    peakOp: a.peak_op === null ? "" : String(a.peak_op),
    buffers: report.buffers.length, rects: report.buffers.length,
  };
}

// The microarena-runtime panel as the page shows it: one entry per mode row,
// one per banded stage (with its chain of ops and the patch view's highlights),
// and whether it says why there is no runtime or no banded mode.
async function runtimePanel(page) {
  return page.$eval('[data-testid="runtime-panel"]', (panel) => {
    const num = (e, a) => Number(e.getAttribute(a));
    return {
      modes: [...panel.querySelectorAll('[data-testid="runtime-mode"]')].map((r) => ({
        mode: r.getAttribute("data-mode"), bytes: num(r, "data-bytes"), delta: num(r, "data-delta"),
      })),
      stages: [...panel.querySelectorAll('[data-testid="banded-stage"]')].map((s) => ({
        first_op: num(s, "data-first-op"), last_op: num(s, "data-last-op"), bands: num(s, "data-bands"),
        ring_bytes: num(s, "data-ring-bytes"), input_rows: num(s, "data-input-rows"),
        field_first: num(s, "data-field-first"), field_end: num(s, "data-field-end"),
        over_input: s.getAttribute("data-over-input") === "true",
      })),
      chains: [...panel.querySelectorAll('[data-testid="banded-stage"]')].map((s) =>
        [...s.querySelectorAll(".op-chip")].map((c) => c.textContent.trim())),
      fields: [...panel.querySelectorAll('[data-testid="patch-svg"] rect.field')].map((f) =>
        [num(f, "data-first"), num(f, "data-end")]),
      noBands: panel.querySelector('[data-testid="runtime-no-bands"]') !== null,
      refusal: panel.querySelector('[data-testid="runtime-refusal"]')?.textContent ?? null,
    };
  });
}

// What the panel must show for a `plan --json` report: the modes' arenas as
// docs/execution-modes.md defines them from `runtime` (OpData in flash takes
// `opdata_bytes` off each total), each against TFLM's minimum working arena.
function expectedRuntime(report) {
  const rt = report.runtime;
  if (!rt) {
    return { modes: [], stages: [], chains: [], fields: [], noBands: false, refusal: `microarena-runtime cannot run this model: ${report.runtime_refusal}` };
  }
  const min = report.arena.minimum_bytes;
  const mode = (name, bytes) => ({ mode: name, bytes, delta: bytes - min });
  const modes = [mode("plain", rt.total_bytes), mode("opdata-flash", rt.total_bytes - rt.opdata_bytes)];
  const ip = rt.in_place;
  if (ip && ip.total_bytes < rt.total_bytes) modes.push(mode("in-place", ip.total_bytes - rt.opdata_bytes));
  if (rt.banded) modes.push(mode("banded", rt.banded.total_bytes - rt.opdata_bytes));
  const bandedTotal = rt.banded ? rt.banded.total_bytes : rt.total_bytes;
  if (ip && ip.banded_total_bytes != null && ip.banded_total_bytes < bandedTotal) {
    modes.push(mode("banded-in-place", ip.banded_total_bytes - rt.opdata_bytes));
  }
  const stages = rt.banded ? rt.banded.stages : [];
  const opcode = (i) => report.operators.find((o) => o.subgraph === 0 && o.index === i).opcode;
  return {
    modes,
    stages,
    chains: stages.map((s) => Array.from({ length: s.last_op - s.first_op + 1 }, (_, k) => `#${s.first_op + k} ${opcode(s.first_op + k)}`)),
    fields: stages.map((s) => [s.field_first, s.field_end]),
    noBands: !rt.banded,
    refusal: null,
  };
}

// Waits until the summary shows `report`'s head and tail (after a re-plan).
async function waitForFigures(page, report) {
  await page.waitForFunction(([h, t]) =>
    document.querySelector('[data-testid="arena-head"]')?.getAttribute("data-bytes") === String(h) &&
    document.querySelector('[data-testid="arena-tail"]')?.getAttribute("data-bytes") === String(t),
  [report.arena.head_bytes, report.arena.tail_bytes]);
}

async function exportedJson(page) {
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.click("text=Export JSON"),
  ]);
  return readFileSync(await download.path(), "utf8");
}


test("the default page shows the bundled example with the CLI's numbers", async () => {
  const { page, problems, close } = await newPage();
  await waitForMap(page, "mobilenet_v1_025_96_int8.tflite");
  const file = join(TMP, "example.tflite");
  assert.equal(cli("example", "-o", file).code, 0);
  const want = planJson(file);
  assert.deepEqual(await shown(page), expected(want.json));
  await page.screenshot({ path: join(SHOTS, "default.png"), fullPage: true });
  await page.screenshot({ path: join(SHOTS, "default-top.png") });

  // Ways to need fewer bytes: each row's promised figure is what the CLI
  // gives when its command is run.
  await page.waitForSelector('[data-testid="advice-row"]');
  const rows = await page.$$eval('[data-testid="advice-row"]', (rs) =>
    rs.map((r) => ({ figure: r.getAttribute("data-figure"), to: Number(r.getAttribute("data-to")), text: r.textContent })));
  const smaller = rows.find((r) => r.text.includes("--input-shape"));
  assert.ok(smaller, JSON.stringify(rows));
  const spec = smaller.text.match(/--input-shape (\S+)/)[1];
  const halved = planJson(file, "--input-shape", spec);
  assert.equal(smaller.to, halved.json.arena.total_bytes, `${spec}: page promises ${smaller.to}`);
  // The runtime advice, one row per mode, each promising that mode's arena.
  const rt = want.json.runtime;
  const runtimeRows = rows.filter((r) => r.text.includes("microarena-runtime"))
    .map((r) => [r.text.match(/microarena run \S+ --input IN\.bin( [^\n]*?)?$/)?.[1]?.trim() ?? "", r.to]);
  assert.deepEqual(runtimeRows.sort(), [
    ["", rt.total_bytes],
    ["--opdata flash", rt.total_bytes - rt.opdata_bytes],
    ...(rt.banded ? [["--exec banded --opdata flash", rt.banded.total_bytes - rt.opdata_bytes]] : []),
  ].sort(), JSON.stringify(rows));
  await page.locator('[data-testid="advice"]').screenshot({ path: join(SHOTS, "advice.png") });

  // Arena map exports: a standalone SVG and a PNG drawn from it.
  const download = async (label) => {
    const [d] = await Promise.all([page.waitForEvent("download"), page.click(`text=${label}`)]);
    return { name: d.suggestedFilename(), bytes: readFileSync(await d.path()) };
  };
  const svgFile = await download("Export SVG");
  assert.equal(svgFile.name, "mobilenet_v1_025_96_int8.arena.svg");
  assert.match(svgFile.bytes.toString("utf8"), /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"[^]*<\/svg>$/);
  const png = await download("Export PNG");
  assert.equal(png.name, "mobilenet_v1_025_96_int8.arena.png");
  assert.deepEqual([...png.bytes.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  assert.ok(png.bytes.length > 10000, `PNG of ${png.bytes.length} bytes`);
  assert.deepEqual(problems, []);
  await close();

  // ?model=URL fetches a hosted model.
  const hosted = await newPage(`${base}?model=/_models/example.tflite`);
  await waitForMap(hosted.page, "example.tflite");
  assert.deepEqual(await shown(hosted.page), expected(want.json));
  assert.deepEqual(hosted.problems, []);
  await hosted.close();
  const missing = await newPage(`${base}?model=/_models/missing.tflite`);
  await missing.page.waitForSelector('[data-testid="error"]');
  assert.match(await missing.page.textContent('[data-testid="error"]'), /HTTP 404/);
  await missing.close();
});

test("every corpus model shows the same numbers and exports the same JSON as the CLI", async (t) => {
  if (!CORPUS) {
    t.skip("MICROARENA_CORPUS is not set");
    return;
  }
  const models = readdirSync(CORPUS).filter((f) => f.endsWith(".tflite")).sort();
  assert.ok(models.length > 0);
  const { page, problems, close } = await newPage();
  await waitForMap(page, "mobilenet_v1_025_96_int8.tflite");
  for (const name of models) {
    const path = join(CORPUS, name);
    const want = planJson(path);
    if (!want) {
      // The CLI refuses it: the app must say why, not crash.
      await page.setInputFiles('[data-testid="model-input"]', path);
      await page.waitForSelector('[data-testid="error"]');
      continue;
    }
    await openModel(page, path, name);
    assert.deepEqual(await shown(page), expected(want.json), name);
    assert.deepEqual(await runtimePanel(page), expectedRuntime(want.json), `${name}: microarena-runtime panel`);
    assert.equal(await exportedJson(page), want.text, `${name}: exported JSON`);
  }
  assert.deepEqual(problems, []);
  await close();
});

test("person_detect: timing, target/planner re-plan, share link in a fresh page", async (t) => {
  if (!CORPUS) {
    t.skip("MICROARENA_CORPUS is not set");
    return;
  }
  const path = join(CORPUS, "person_detect.tflite");
  if (!existsSync(join(TMP, "example.tflite"))) assert.equal(cli("example", "-o", join(TMP, "example.tflite")).code, 0);
  const { page, problems, close } = await newPage();
  await waitForMap(page, "mobilenet_v1_025_96_int8.tflite");
  const times = [];
  for (let i = 0; i < 3; i++) {
    // Alternate with the example so each drop is a real change.
    await openModel(page, path, "person_detect.tflite").then((x) => times.push(x));
    if (i < 2) {
      await page.setInputFiles('[data-testid="model-input"]', join(TMP, "example.tflite"));
      await waitForMap(page, "example.tflite");
    }
  }
  console.log(`# perf person_detect: file → rendered map ${times.map((x) => `${x.mapWall} ms (in app: map ${x.mapMs.toFixed(0)} ms, all views ${x.inApp.toFixed(0)} ms)`).join("; ")}`);
  assert.ok(Math.min(...times.map((x) => x.mapMs)) < 300, "person_detect under 300 ms");
  await page.screenshot({ path: join(SHOTS, "person_detect.png"), fullPage: true });

  // Hover a buffer for the tooltip, select it.
  const rect = await page.$('[data-testid="arena-map"] rect[data-i="3"]');
  await rect.hover();
  await page.waitForSelector(".tooltip");
  await page.screenshot({ path: join(SHOTS, "tooltip.png") });

  for (const [sel, value, flag] of [["target-select", "cortex-m4-cmsis-nn", "--target"], ["planner-select", "linear", "--planner"]]) {
    await page.selectOption(`[data-testid="${sel}"]`, value);
    const want = planJson(path, "--target", await page.$eval('[data-testid="target-select"]', (e) => e.value),
      "--planner", await page.$eval('[data-testid="planner-select"]', (e) => e.value));
    await page.waitForFunction((h) => document.querySelector('[data-testid="arena-head"]')?.getAttribute("data-bytes") === String(h) &&
      document.querySelector('[data-testid="arena-tail"]')?.getAttribute("data-bytes") !== null, want.json.arena.head_bytes);
    await page.waitForFunction((tail) => document.querySelector('[data-testid="arena-tail"]')?.getAttribute("data-bytes") === String(tail), want.json.arena.tail_bytes);
    assert.deepEqual(await shown(page), expected(want.json), `${flag} ${value}`);
  }

  // The share link reproduces the same view in a fresh page, with no model.
  const numbers = await shown(page);
  await page.waitForSelector('[data-testid="share-link"]');
  const link = await page.$eval('[data-testid="share-link"]', (e) => e.href);
  const linkBytes = Buffer.byteLength(link);
  console.log(`# share link for person_detect (cortex-m4-cmsis-nn, linear): ${linkBytes} bytes`);
  assert.ok(linkBytes < 8192);
  const fresh = await newPage(link);
  await waitForMap(fresh.page, "person_detect.tflite");
  assert.deepEqual(await shown(fresh.page), numbers);
  assert.equal(await fresh.page.$eval('[data-testid="share-link"]', (e) => e.href), link);
  await fresh.page.screenshot({ path: join(SHOTS, "shared.png") });
  assert.deepEqual(fresh.problems, []);
  await fresh.close();
  assert.deepEqual(problems, []);
  await close();
});

test("the microarena-runtime panel and its patch view show `plan --json`'s runtime figures (bundled example, person_detect)", async (t) => {
  const example = join(TMP, "example-runtime.tflite");
  assert.equal(cli("example", "-o", example).code, 0);
  const { page, problems, close } = await newPage();
  await waitForMap(page, "mobilenet_v1_025_96_int8.tflite");
  const want = planJson(example).json;
  assert.ok(want.runtime, "the example runs on microarena-runtime");
  assert.deepEqual(await runtimePanel(page), expectedRuntime(want), "bundled example");
  const rows = () => page.$$eval('[data-testid="runtime-mode"]', (rs) => rs.map((r) => r.textContent));
  // Each row names the `run` flags that select it.
  const flags = (await rows()).map((r) => r.match(/--exec banded --opdata flash|--opdata flash|\(default\)/)?.[0]);
  assert.deepEqual(flags, ["(default)", "--opdata flash", ...(want.runtime.banded ? ["--exec banded --opdata flash"] : [])]);
  await page.locator('[data-testid="runtime-panel"]').screenshot({ path: join(SHOTS, "runtime-example.png") });
  if (!CORPUS) {
    t.diagnostic("person_detect skipped: MICROARENA_CORPUS is not set");
    assert.deepEqual(problems, []);
    await close();
    return;
  }
  const name = "person_detect.tflite";
  const pd = planJson(join(CORPUS, name));
  await openModel(page, join(CORPUS, name), name);
  assert.ok(pd.json.runtime?.banded, "person_detect has a banded stage");
  const panel = await runtimePanel(page);
  assert.deepEqual(panel, expectedRuntime(pd.json), name);
  const [plain, flash, banded] = panel.modes;
  console.log(`# microarena-runtime on ${name}: TFLM minimum ${pd.json.arena.minimum_bytes} B, plain ${plain.bytes} B, OpData in flash ${flash.bytes} B, banded + flash ${banded.bytes} B (${pd.json.runtime.banded.stages.map((s) => `ops ${s.first_op}-${s.last_op} in ${s.bands} bands, field ${s.field_first}..${s.field_end} of ${s.input_rows}`).join("; ")})`);
  // Clicking an op of the chain selects it in the other views.
  await page.click('[data-testid="banded-stage"] .op-chip >> nth=1');
  await page.locator('[data-testid="runtime-panel"]').screenshot({ path: join(SHOTS, "runtime-person_detect.png") });
  // A share link carries the runtime figures (version 3): the same panel in a fresh page.
  await page.waitForSelector('[data-testid="share-link"]');
  const link = await page.$eval('[data-testid="share-link"]', (e) => e.href);
  const fresh = await newPage(link);
  await waitForMap(fresh.page, name);
  assert.deepEqual(await runtimePanel(fresh.page), expectedRuntime(pd.json), "shared");
  assert.deepEqual(fresh.problems, []);
  await fresh.close();
  assert.deepEqual(problems, []);
  await close();
});

test("a malformed file, a dropped non-model and malformed links show an error", async () => {
  const { page, problems, close } = await newPage();
  await waitForMap(page, "mobilenet_v1_025_96_int8.tflite");
  await page.setInputFiles('[data-testid="model-input"]', {
    name: "garbage.tflite", mimeType: "application/octet-stream", buffer: Buffer.from("this is not a model at all"),
  });
  await page.waitForSelector('[data-testid="error"]');
  assert.match(await page.textContent('[data-testid="error"]'), /garbage\.tflite/);
  // A corrupt model with the right identifier.
  const bad = Buffer.alloc(64, 0xff);
  bad.write("TFL3", 4);
  const dataTransfer = await page.evaluateHandle((bytes) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(bytes)], "corrupt.tflite"));
    return dt;
  }, [...bad]);
  await page.dispatchEvent(".app", "drop", { dataTransfer });
  await page.waitForFunction(() => /corrupt\.tflite/.test(document.querySelector('[data-testid="error"]')?.textContent ?? ""));
  await page.screenshot({ path: join(SHOTS, "bad-file.png") });
  assert.deepEqual(problems, []);

  await page.waitForSelector('[data-testid="share-link"]');
  const goodLink = await page.$eval('[data-testid="share-link"]', (e) => e.href);
  const code = goodLink.split("#r=")[1];
  for (const frag of ["#r=", "#r=%%%garbage", "#r=AAAA", `#r=${code.slice(0, code.length / 2)}`, `#r=${code.slice(0, -3)}`, "#r=" + "A".repeat(5000)]) {
    const p = await newPage(base + frag);
    await p.page.waitForSelector('[data-testid="error"]');
    assert.ok(await p.page.isVisible(".topbar"), "the page is not blank");
    assert.deepEqual(p.problems, [], frag.slice(0, 40));
    if (frag === "#r=AAAA") await p.page.screenshot({ path: join(SHOTS, "bad-link.png") });
    await p.close();
  }
  await close();
});

test("the budget verdict flips when the RAM shrinks", async () => {
  const { page, close } = await newPage();
  await waitForMap(page, "mobilenet_v1_025_96_int8.tflite");
  const verdict = () => page.$eval('[data-testid="budget-verdict"]', (e) => e.getAttribute("data-fits"));
  // Choosing a device re-plans for its target: an STM32H743 builds TFLM with CMSIS-NN.
  const file = join(TMP, "example.tflite");
  assert.equal(cli("example", "-o", file).code, 0);
  await page.selectOption('[data-testid="mcu-preset"]', "STM32H743");
  await waitForFigures(page, planJson(file, "--target", "cortex-m4-cmsis-nn").json);
  // Locators wait for the controls, which re-render when the new report lands.
  assert.equal(await page.locator('[data-testid="target-select"]').inputValue(), "cortex-m4-cmsis-nn");
  assert.equal(await page.locator('[data-testid="mcu-preset"]').inputValue(), "STM32H743");
  assert.equal(await verdict(), "true");
  // The placement among its memories is `check --device`'s, to the byte and the C++ line.
  const check = JSON.parse(cli("check", file, "--device", "STM32H743", "--reserve", "stack=8K,rtos=16K,isr=2K,dma=4K,log=1K", "--json").stdout);
  await page.waitForSelector('[data-testid="placement-cpp"]');
  assert.equal(await page.textContent('[data-testid="placement-cpp"]'), check.placement.cpp);
  assert.match(check.placement.cpp, /section\("\.dtcm"\)/);
  await page.locator('[data-testid="placement"]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, "budget-placement.png") });
  await page.selectOption('[data-testid="mcu-preset"]', "custom");
  await page.fill('.budget input[type=number] >> nth=0', "48");
  await page.waitForFunction(() => document.querySelector('[data-testid="budget-verdict"]')?.getAttribute("data-fits") === "false");
  await page.locator('[data-testid="budget-verdict"]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, "budget-fail.png") });
  await close();
});

// The seed's RP2040 case: fits on TFLM's reference kernels, not on the CMSIS-NN build the
// RP2040's SDK uses; the im2col buffer that tips it is named by its owning op on hover.
test("RP2040: choosing the device re-plans for CMSIS-NN and the im2col scratch is named", async () => {
  const file = join(TMP, "rp2040.tflite");
  assert.equal(cli("example", "--name", "rp2040-cnn", "-o", file).code, 0);
  const { page, problems, close } = await newPage();
  await waitForMap(page, "mobilenet_v1_025_96_int8.tflite");
  await openModel(page, file, "rp2040.tflite");
  await waitForFigures(page, planJson(file).json);
  const cmsis = planJson(file, "--target", "cortex-m0plus-cmsis-nn").json;
  await page.selectOption('[data-testid="mcu-preset"]', "RP2040");
  await waitForFigures(page, cmsis);
  assert.equal(await page.locator('[data-testid="target-select"]').inputValue(), "cortex-m0plus-cmsis-nn");
  assert.match(await page.textContent('[data-testid="device-line"]'), /Cortex-M0\+.*CMSIS-NN.*cortex-m0plus-cmsis-nn/);
  // 48 KiB of RTOS and stacks: main stack 8 + RTOS 40, nothing else.
  const inputs = page.locator(".budget input[type=number]");
  for (const [i, kib] of [[0, "8"], [1, "40"], [2, "0"], [3, "0"], [4, "0"]]) await inputs.nth(i).fill(kib);
  await page.waitForFunction(() => document.querySelector('[data-testid="budget-verdict"]')?.getAttribute("data-fits") === "false");
  const peak = await page.textContent('[data-testid="budget-peak"]');
  assert.match(peak, /8,800 B scratch 0 of CONV_2D 1: im2col \(CMSIS-NN\)/);
  // The same budget on the reference kernels fits.
  await page.selectOption('[data-testid="target-select"]', "cortex-m");
  await waitForFigures(page, planJson(file).json);
  await page.waitForFunction(() => document.querySelector('[data-testid="budget-verdict"]')?.getAttribute("data-fits") === "true");
  await page.selectOption('[data-testid="target-select"]', "cortex-m0plus-cmsis-nn");
  await waitForFigures(page, cmsis);
  // Hovering the scratch buffer in the arena map names it and its op.
  const i = cmsis.buffers.findIndex((b) => b.kind === "scratch" && b.op === 1);
  await page.hover(`[data-testid="arena-map"] rect[data-i="${i}"]`);
  await page.waitForSelector(".tooltip");
  assert.match(await page.textContent(".tooltip"), /scratch 0 of CONV_2D 1: im2col \(CMSIS-NN\).*8,800 B/s);
  await page.screenshot({ path: join(SHOTS, "rp2040-im2col.png") });
  await page.locator('[data-testid="budget-verdict"]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, "rp2040-budget.png") });
  assert.deepEqual(problems, []);
  await close();
});

test("the flash view, compute bars and op table show the CLI's flash and MAC figures; the flash verdict follows the code size", async () => {
  const { page, problems, close } = await newPage();
  await waitForMap(page, "mobilenet_v1_025_96_int8.tflite");
  const file = join(TMP, "example.tflite");
  if (!existsSync(file)) assert.equal(cli("example", "-o", file).code, 0);
  const want = planJson(file).json;
  await page.waitForSelector('[data-testid="flash-view"]');
  const attr = (sel, a) => page.$eval(sel, (e, a) => e.getAttribute(a), a);
  assert.equal(Number(await attr('[data-testid="flash-view"]', "data-file-bytes")), want.flash.file_bytes);
  assert.equal(Number(await attr('[data-testid="flash-view"]', "data-constant-bytes")), want.flash.constant_bytes);
  assert.equal(Number(await attr('[data-testid="compute-bars"]', "data-macs")), want.compute.macs);
  const largest = await page.$$eval('[data-testid="largest-constants"] tbody tr', (rs) => rs.map((r) => r.lastElementChild.textContent.trim()));
  assert.deepEqual(largest, want.flash.largest.map((c) => c.bytes.toLocaleString("en-US")));
  // The op table opens sorted by MACs, largest first; "weights" sorts by constant bytes.
  const firstRow = (a) => page.$eval(`[data-testid="op-table"] tbody tr:first-child td[${a}]`, (e, a) => Number(e.getAttribute(a)), a);
  assert.equal(await firstRow("data-macs"), Math.max(...want.operators.map((o) => o.macs)));
  await page.click('[data-testid="op-table"] th[data-col="weights"]');
  await page.waitForFunction((w) => document.querySelector('[data-testid="op-table"] tbody tr:first-child td[data-weights]')?.getAttribute("data-weights") === String(w),
    Math.max(...want.operators.map((o) => o.constant_bytes)));
  const rows = await page.$$eval('[data-testid="op-table"] tbody tr', (rs) => rs.length);
  assert.equal(rows, want.operators.length);
  // The tail cell names what each op's tail holds, and the tail panel sums
  // them by op kind and purpose — both from `operators[].allocations`.
  // Back to MACs: the first row is the op with the most (the first of ties).
  await page.click('[data-testid="op-table"] th[data-col="MACs"]');
  const most = Math.max(...want.operators.map((o) => o.macs));
  await page.waitForFunction((m) => document.querySelector('[data-testid="op-table"] tbody tr:first-child td[data-macs]')?.getAttribute("data-macs") === String(m), most);
  const tip = await page.$eval('[data-testid="op-table"] tbody tr:first-child td[title]', (e) => e.getAttribute("title"));
  const op = want.operators.find((o) => o.macs === most);
  assert.ok(op.allocations.length > 0, "the largest op keeps something in the tail");
  for (const a of op.allocations) assert.ok(tip.includes(`${a.purpose}: ${a.requested_bytes} B`), `${tip} names ${a.purpose}`);
  const groups = new Map();
  for (const o of want.operators) {
    for (const a of o.allocations) {
      const k = `${o.opcode}|${a.purpose}`;
      const g = groups.get(k) ?? { count: 0, bytes: 0 };
      groups.set(k, { count: g.count + 1, bytes: g.bytes + a.bytes });
    }
  }
  const shown = await page.$$eval('[data-testid="tail-purposes"] tbody tr', (rs) => rs.map((r) => [...r.children].map((c) => c.textContent.trim())));
  assert.ok(shown.length > 0);
  for (const [opcode, purpose, count, bytes] of shown) {
    const g = groups.get(`${opcode}|${purpose}`);
    assert.ok(g, `${opcode} ${purpose} is in plan --json`);
    assert.equal(Number(count), g.count);
    assert.equal(bytes, g.bytes.toLocaleString("en-US"));
  }
  await page.locator('section.panel:has([data-testid="tail-purposes"])').screenshot({ path: join(SHOTS, "tail-purposes.png") });
  await page.locator('[data-testid="flash-view"]').scrollIntoViewIfNeeded();
  await page.locator('[data-testid="flash-view"]').screenshot({ path: join(SHOTS, "flash.png") });
  await page.locator('[data-testid="compute-bars"]').scrollIntoViewIfNeeded();
  await page.locator('section.panel:has([data-testid="compute-bars"])').screenshot({ path: join(SHOTS, "compute-bars.png") });
  await page.locator('section.panel:has([data-testid="op-table"])').screenshot({ path: join(SHOTS, "op-table.png") });

  // STM32F746: 1 MiB on-chip flash; the model file plus 128 KiB of code fits,
  // 1 MiB of code does not — the same sums as `check --flash 1M --code …`.
  await page.selectOption('[data-testid="mcu-preset"]', "STM32F746");
  // The device re-plans for its target (M7 with CMSIS-NN); the file, so the flash, is the same.
  await waitForFigures(page, planJson(file, "--target", "cortex-m4-cmsis-nn").json);
  const fv = () => page.$eval('[data-testid="flash-verdict"]', (e) => [e.getAttribute("data-fits"), Number(e.getAttribute("data-used"))]);
  assert.deepEqual(await fv(), ["true", want.flash.file_bytes + 128 * 1024]);
  await page.locator('section.panel:has([data-testid="flash-verdict"])').screenshot({ path: join(SHOTS, "budget-flash.png") });
  const code = page.locator('.budget label:has-text("Firmware code") input');
  await code.fill("1024");
  await page.waitForFunction(() => document.querySelector('[data-testid="flash-verdict"]')?.getAttribute("data-fits") === "false");
  assert.deepEqual(await fv(), ["false", want.flash.file_bytes + 1024 * 1024]);
  const check = cli("check", file, "--ram", "320K", "--flash", "1M", "--code", "1M", "--json");
  assert.equal(check.code, 1);
  assert.equal(JSON.parse(check.stdout).flash.used_bytes, want.flash.file_bytes + 1024 * 1024);
  assert.deepEqual(problems, []);
  await close();
});

test("performance: wasm size and a 2,000-op model off the main thread", async () => {
  const wasm = readFileSync(join(DIST, "microarena-app_bg.wasm"));
  console.log(`# wasm: ${wasm.length} B raw, ${gzipSync(wasm, { level: 9 }).length} B gzip`);
  const file = join(TMP, "synthetic2000.tflite");
  coreExample("synthetic", "2000", file);
  const want = planJson(file);
  const { page, problems, close } = await newPage();
  await waitForMap(page, "mobilenet_v1_025_96_int8.tflite");
  // Main-thread tasks over 50 ms while the model is analysed and drawn.
  await page.evaluate(() => {
    window.__long = [];
    new PerformanceObserver((l) => l.getEntries().forEach((e) => window.__long.push(e.duration)))
      .observe({ type: "longtask" });
  });
  const { wall, inApp, mapWall, mapMs } = await openModel(page, file, "synthetic2000.tflite");
  await page.waitForTimeout(200);
  const long = await page.evaluate(() => window.__long);
  const maxGap = Math.max(0, ...long);
  const worker = await page.evaluate(() => window.__microarenaWorker);
  console.log(`# worker phases (ms): ${JSON.stringify(worker)}; main-thread long tasks (ms): ${long.map((x) => x.toFixed(0)).join(", ")}`);
  console.log(`# perf synthetic 2000 ops (${want.json.buffers.length} buffers): file → rendered map ${mapWall} ms (in app ${mapMs.toFixed(0)} ms), all views ${wall} ms (in app ${inApp.toFixed(0)} ms), longest main-thread task ${maxGap.toFixed(0)} ms`);
  assert.deepEqual(await shown(page), expected(want.json));
  assert.ok(mapMs < 2000, "2,000 ops under 2 s");
  assert.ok(maxGap < 1000, "the page stays responsive");
  await page.screenshot({ path: join(SHOTS, "synthetic2000.png") });
  assert.deepEqual(problems, []);
  await close();
});

// What-if input shapes and variable tensors, against `microarena plan --json [--input-shape]`.

async function nextRender(page, action) {
  const before = await page.evaluate(() => window.__microarena?.seq ?? 0);
  await action();
  await page.waitForFunction((prev) => (window.__microarena?.seq ?? 0) !== prev, before, { timeout: 30000 });
}

async function delta(page) {
  return page.$$eval('[data-testid="whatif-delta"] tbody tr', (rows) => Object.fromEntries(rows.map((r) => [
    r.getAttribute("data-testid").replace("whatif-delta-", ""),
    { original: r.getAttribute("data-original"), whatIf: r.getAttribute("data-whatif"), delta: r.getAttribute("data-delta") },
  ])));
}

function expectedDelta(report) {
  const w = report.what_if;
  const row = (o, n) => ({
    original: o === null ? "" : String(o), whatIf: n === null ? "" : String(n),
    delta: o === null || n === null ? "" : String(n - o),
  });
  return {
    head: row(w.original_head_bytes, report.arena.head_bytes),
    tail: row(w.original_tail_bytes, report.arena.tail_bytes),
    total: row(w.original_total_bytes, report.arena.total_bytes),
    minimum: row(w.original_minimum_bytes, report.arena.minimum_bytes),
    runtime: row(w.original_runtime_total_bytes, report.runtime ? report.runtime.total_bytes : null),
  };
}

test("what-if on micro_speech_lstm: the page equals `plan --input-shape`, the share link keeps it, impossible shapes name the tensor", async (t) => {
  if (!CORPUS) {
    t.skip("MICROARENA_CORPUS is not set");
    return;
  }
  const name = "micro_speech_lstm.tflite";
  const path = join(CORPUS, name);
  const original = planJson(path);
  // The graph input from the CLI: the head tensor no op produces.
  const input = original.json.buffers.find((b) => b.kind === "tensor" && b.op === null && b.subgraph === 0);
  assert.ok(input, "the CLI report names the graph input");
  const { page, problems, close } = await newPage();
  await waitForMap(page, "mobilenet_v1_025_96_int8.tflite");
  await openModel(page, path, name);
  assert.deepEqual(await shown(page), expected(original.json));
  const field = `[data-testid="whatif-input-${input.name}"]`;
  assert.equal(await page.inputValue(field), input.shape.join(","));
  assert.equal(await page.$('[data-testid="whatif-delta"]'), null, "no delta for the model as converted");

  // Features per step are fixed by the LSTM's weights: the CLI refuses another
  // count, and the page shows the same message and keeps its plan.
  const wrong = [...input.shape.slice(0, -1), input.shape.at(-1) - 1];
  const refused = cli("plan", path, "--json", "--input-shape", `${input.name}=${wrong.join(",")}`);
  assert.equal(refused.code, 2, "the CLI refuses another feature count");
  const cliWhy = refused.stderr.trim().split("what-if: ")[1];
  assert.ok(cliWhy, refused.stderr);
  await page.fill(field, wrong.join(","));
  await page.click('[data-testid="whatif-apply"]');
  await page.waitForSelector('[data-testid="whatif-error"]');
  const pageWhy = await page.textContent('[data-testid="whatif-error"]');
  assert.ok(pageWhy.includes(cliWhy), `page: ${pageWhy}\ncli: ${cliWhy}`);
  assert.match(pageWhy, /tensor \d+ '[^']+'/, "the error names the tensor");
  assert.equal(await page.$('[data-testid="error"]'), null, "no page-level error");
  assert.deepEqual(await shown(page), expected(original.json), "the previous plan stays");
  await page.locator('[data-testid="whatif"]').screenshot({ path: join(SHOTS, "whatif-error.png") });

  // Half the sequence, the use case: every shape re-derived (the flatten RESHAPE
  // and the dense weights follow); head, tail, total, runtime and the delta equal the CLI's.
  const shorter = [input.shape[0], Math.floor(input.shape[1] / 2), ...input.shape.slice(2)];
  const spec = `${input.name}=${shorter.join(",")}`;
  const want = planJson(path, "--input-shape", spec);
  assert.ok(want && want.json.what_if, "the CLI applies the what-if");
  await page.fill(field, shorter.join("×"));
  const t0 = Date.now();
  await nextRender(page, () => page.click('[data-testid="whatif-apply"]'));
  console.log(`# what-if ${spec}: apply → all views re-rendered in ${Date.now() - t0} ms`);
  assert.equal(await page.$('[data-testid="whatif-error"]'), null, "the error is cleared");
  assert.deepEqual(await shown(page), expected(want.json));
  assert.deepEqual(await delta(page), expectedDelta(want.json));
  assert.match(await page.textContent('[data-testid="whatif-badge"]'), new RegExp(spec.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
  assert.equal(await exportedJson(page), want.text, "exported JSON = plan --json --input-shape");
  const d = expectedDelta(want.json);
  console.log(`# what-if delta on ${name} (${spec}): head ${d.head.delta}, tail ${d.tail.delta}, total ${d.total.delta}, runtime ${d.runtime.delta} B`);
  await page.locator('[data-testid="whatif"]').screenshot({ path: join(SHOTS, "whatif.png") });
  await page.screenshot({ path: join(SHOTS, "whatif-page.png") });

  // An impossible shape after a what-if: the what-if plan stays.
  await page.fill(field, "1,0,257");
  await page.click('[data-testid="whatif-apply"]');
  await page.waitForSelector('[data-testid="whatif-error"]');
  assert.deepEqual(await shown(page), expected(want.json));

  // The share link reproduces the what-if state in a fresh page.
  await page.waitForSelector('[data-testid="share-link"]');
  const link = await page.$eval('[data-testid="share-link"]', (e) => e.href);
  const fresh = await newPage(link);
  await waitForMap(fresh.page, name);
  assert.deepEqual(await shown(fresh.page), expected(want.json));
  assert.deepEqual(await delta(fresh.page), expectedDelta(want.json));
  assert.match(await fresh.page.textContent('[data-testid="whatif"]'), new RegExp(spec.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
  assert.equal(await exportedJson(fresh.page), want.text, "a shared what-if exports the CLI's JSON");
  assert.deepEqual(fresh.problems, []);
  await fresh.close();

  // Reset: back to the model as converted.
  await nextRender(page, () => page.click('[data-testid="whatif-reset"]'));
  assert.deepEqual(await shown(page), expected(original.json));
  assert.equal(await page.$('[data-testid="whatif-delta"]'), null);
  assert.equal(await page.$('[data-testid="whatif-error"]'), null);
  assert.equal(await page.inputValue(field), input.shape.join(","));
  assert.deepEqual(problems, []);
  await close();
});

test("variables are a region of their own and scratch buffers name their op, as the CLI reports them", async (t) => {
  if (!CORPUS) {
    t.skip("MICROARENA_CORPUS is not set");
    return;
  }
  const { page, problems, close } = await newPage();
  await waitForMap(page, "mobilenet_v1_025_96_int8.tflite");
  for (const name of ["micro_speech_lstm.tflite", "keyword_scrambled.tflite"]) {
    const want = planJson(join(CORPUS, name)).json;
    await openModel(page, join(CORPUS, name), name);
    const vars = want.variables;
    const bytes = vars.reduce((s, v) => s + v.bytes, 0);
    const inTail = vars.filter((v) => v.region === "tail");
    assert.ok(vars.length > 0, `${name} has variables`);
    const summary = await page.$eval('[data-testid="variables-summary"]', (e) => [e.getAttribute("data-count"), e.getAttribute("data-bytes"), e.textContent]);
    assert.deepEqual(summary.slice(0, 2), [String(vars.length), String(bytes)], name);
    assert.match(summary[2], new RegExp(`variables: ${vars.length} tensors, ${bytes.toLocaleString("en-US")} bytes`));
    // The map's tail strip: one band per tail variable (up to 8).
    const region = await page.$eval('[data-testid="variable-region"]', (e) => [Number(e.getAttribute("data-count")), Number(e.getAttribute("data-bytes"))]);
    assert.deepEqual(region, [inTail.length, inTail.reduce((s, v) => s + v.bytes, 0)], name);
    assert.equal(await page.$$eval('[data-testid="variable-region"] .var-band[data-v]', (b) => b.length), Math.min(inTail.length, 8));
    // Lifetimes: a row per variable spanning every scope.
    const rows = await page.$$eval('[data-testid="lifetimes"] rect[data-v]', (rs) => rs.map((r) => Number(r.getAttribute("width"))));
    assert.equal(rows.length, inTail.length);
    assert.ok(rows.every((w) => w === 1000), "variable rows span the whole chart");
    // Tooltip of the first variable band: name, shape, dtype, bytes, owner op, lifetime.
    await page.hover('[data-testid="variable-region"] .var-band[data-v="0"]');
    await page.waitForSelector(".tooltip");
    const tip = await page.textContent(".tooltip");
    const v = vars[0];
    for (const s of [v.name, v.shape.join("×"), v.dtype, `${v.bytes.toLocaleString("en-US")} B`, `#${v.op} ${v.opcode}`, "whole interpreter"]) {
      assert.ok(tip.includes(s), `${name}: tooltip has ${s}: ${tip}`);
    }
    // Every scratch buffer names its owning op (index and opcode) in the map tooltip.
    for (const [i, b] of want.buffers.entries()) {
      if (b.kind !== "scratch") continue;
      const opcode = want.operators.find((o) => o.subgraph === b.subgraph && o.index === b.op).opcode;
      await page.hover(`[data-testid="arena-map"] rect[data-i="${i}"]:not(.pad)`, { force: true });
      await page.waitForFunction((s) => document.querySelector(".tooltip")?.textContent.includes(s), `#${b.op} ${opcode}`);
    }
    const scratch = want.buffers.filter((b) => b.kind === "scratch").length;
    const labels = await page.$$eval(".lt-label:not(.var)", (ls) => ls.map((l) => l.textContent));
    assert.equal(labels.length, scratch, `${name}: a lifetimes label per scratch buffer`);
    await page.locator('[data-testid="variable-region"]').screenshot({ path: join(SHOTS, `variables-region-${name.replace(".tflite", "")}.png`) });
    if (name === "micro_speech_lstm.tflite") {
      await page.locator('[data-testid="variable-region"]').scrollIntoViewIfNeeded();
      await page.mouse.move(0, 0);
      await page.locator('[data-testid="arena-map"]').locator("xpath=ancestor::section").screenshot({ path: join(SHOTS, "variables-map.png") });
      await page.locator('[data-testid="lifetimes"]').locator("xpath=ancestor::section").screenshot({ path: join(SHOTS, "variables-lifetimes.png") });
      await page.hover('[data-testid="variable-region"] .var-band[data-v="1"]');
      await page.waitForSelector(".tooltip");
      await page.screenshot({ path: join(SHOTS, "variables-tooltip.png") });
    }
  }
  assert.deepEqual(problems, []);
  await close();
});

test("served from a sub-path (/microarena/), the app loads every asset under it and works", async () => {
  const from = requested.length;
  const { page, problems, close } = await newPage(`${base}microarena/`);
  await waitForMap(page, "mobilenet_v1_025_96_int8.tflite");
  const file = join(TMP, "example-subpath.tflite");
  assert.equal(cli("example", "-o", file).code, 0);
  const want = planJson(file);
  assert.deepEqual(await shown(page), expected(want.json));
  // A share link made there opens there, in a fresh page.
  await page.waitForSelector('[data-testid="share-link"]');
  const link = await page.$eval('[data-testid="share-link"]', (e) => e.href);
  assert.ok(link.startsWith(`${base}microarena/`), link);
  assert.deepEqual(problems, []);
  await close();
  const shared = await newPage(link);
  await waitForMap(shared.page, "mobilenet_v1_025_96_int8.tflite");
  assert.deepEqual(await shown(shared.page), expected(want.json));
  assert.deepEqual(shared.problems, []);
  await shared.page.screenshot({ path: join(SHOTS, "subpath.png") });
  await shared.close();
  // Nothing was fetched from outside the sub-path: page, script, wasm, worker, stylesheet.
  const outside = requested.slice(from).filter((p) => !p.startsWith(SUBPATH));
  assert.deepEqual(outside, []);
});

test("new devices choose their targets: ESP32-S3 plans with ESP-NN, Alif E7 with the Ethos-U build and shows the NPU region", async (t) => {
  const file = join(TMP, "rp2040.tflite");
  if (!existsSync(file)) assert.equal(cli("example", "--name", "rp2040-cnn", "-o", file).code, 0);
  const { page, problems, close } = await newPage();
  await waitForMap(page, "mobilenet_v1_025_96_int8.tflite");
  await openModel(page, file, "rp2040.tflite");
  await waitForFigures(page, planJson(file).json);
  await page.selectOption('[data-testid="mcu-preset"]', "ESP32-S3");
  await waitForFigures(page, planJson(file, "--target", "esp32s3-esp-nn").json);
  assert.equal(await page.locator('[data-testid="target-select"]').inputValue(), "esp32s3-esp-nn");
  assert.equal(await page.locator('[data-testid="npu-view"]').count(), 0, "no NPU panel without NPU ops");
  if (!CORPUS) {
    t.diagnostic("MICROARENA_CORPUS is not set: the Vela model is skipped");
    await close();
    return;
  }
  const vela = join(CORPUS, "person_detect_vela.tflite");
  await page.selectOption('[data-testid="mcu-preset"]', "Alif-E7");
  assert.equal(await page.locator('[data-testid="target-select"]').inputValue(), "cortex-m55-ethos-u");
  await openModel(page, vela, "person_detect_vela.tflite");
  const want = planJson(vela, "--target", "cortex-m55-ethos-u").json;
  await waitForFigures(page, want);
  const npu = page.locator('[data-testid="npu-view"]');
  await npu.waitFor();
  assert.equal(await npu.getAttribute("data-arena-bytes"), String(want.npu.arena_bytes));
  assert.equal(await npu.getAttribute("data-flash-bytes"), String(want.npu.flash_bytes));
  assert.match(await npu.textContent(), /_split_1_scratch_fast/);
  await npu.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, "npu-region.png") });
  assert.deepEqual(problems, []);
  await close();
});
