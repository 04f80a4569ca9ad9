// Browser tests of the views that teach (issue 31): the step-through,
// grouped diagnostics and large models, the comparison, measured figures in
// the budget, the lessons and an accessibility check. Run: node --test e2e/
// Every figure on the page is compared with `microarena plan --json` / `diff --json`.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { readFileSync, mkdirSync, writeFileSync } from "node:fs";
import { ROOT, SHOTS, TMP, EXAMPLE, APP_TARGET, cli, planJson, exampleFile, coreExample, runExample, start, waitForMap, openModel, bytesOf } from "./harness.mjs";

let h;
before(async () => {
  h = await start();
});
after(async () => {
  await h?.stop();
});

// The step-through's state: how many steps, where it is, the phases.
async function scrubber(page) {
  return page.$eval('[data-testid="steps"]', (e) => ({
    steps: Number(e.getAttribute("data-steps")),
    at: Number(e.getAttribute("data-at")),
    playing: e.getAttribute("data-playing") === "true",
    reduced: e.getAttribute("data-reduced-motion") === "true",
    phases: [...e.querySelectorAll('[data-testid="step-phase"]')].map((p) => ({
      phase: p.getAttribute("data-phase"), first: Number(p.getAttribute("data-first")), count: Number(p.getAttribute("data-count")),
    })),
  }));
}

async function stepFigures(page) {
  return {
    head: await bytesOf(page, "step-head"),
    tail: await bytesOf(page, "step-tail"),
    arena: await bytesOf(page, "step-arena"),
    minimum: await bytesOf(page, "step-minimum"),
  };
}

async function openSteps(page) {
  await page.click('[data-testid="steps-start"]');
  await page.waitForSelector('[data-testid="steps"]', { timeout: 30000 });
}

// The step-through panel and the arena map under it, in one picture.
async function shootStepAndMap(page, name) {
  const panel = page.locator('[data-testid="steps-panel"]');
  await panel.scrollIntoViewIfNeeded();
  await page.evaluate(() => window.scrollBy(0, document.querySelector('[data-testid="steps-panel"]').getBoundingClientRect().top - 60));
  const top = await panel.boundingBox();
  const map = await page.locator('[data-testid="arena-map"]').boundingBox();
  await page.screenshot({ path: join(SHOTS, name), fullPage: true, clip: { x: 0, y: top.y + (await page.evaluate(() => window.scrollY)) - 10, width: 1440, height: map.y + map.height - top.y + 40 } });
}

async function press(page, key) {
  const at = (await scrubber(page)).at;
  await page.focus('[data-testid="steps"]');
  await page.keyboard.press(key);
  return at;
}

test("step-through: TFLM's phases in order on the example and a dropped model, the last step is `plan --json`'s arena", async () => {
  const { page, problems, close } = await h.newPage();
  await waitForMap(page, EXAMPLE);
  const want = planJson(exampleFile()).json;
  await openSteps(page);
  const s = await scrubber(page);
  assert.deepEqual(s.phases.map((p) => p.phase), ["build", "prepare", "plan", "finish", "invoke"]);
  assert.equal(s.phases.reduce((n, p) => n + p.count, 0), s.steps);
  const phase = Object.fromEntries(s.phases.map((p) => [p.phase, p]));
  // One Prepare per op, one placement per buffer (after the plan's tail steps and its start), one Invoke per op.
  assert.equal(phase.prepare.count, want.operators.length);
  assert.equal(phase.invoke.count, want.operators.filter((o) => o.scope >= 0).length);
  assert.ok(phase.plan.count >= want.buffers.length + 1);
  assert.equal(s.at, 0);

  // Keys: End is the last step, whose figures are the report's.
  await press(page, "End");
  assert.equal((await scrubber(page)).at, s.steps - 1);
  const a = want.arena;
  assert.deepEqual(await stepFigures(page), { head: a.head_bytes, tail: a.tail_bytes, arena: a.total_bytes, minimum: a.minimum_bytes });
  // The last Invoke highlights its op in the per-op bars and its buffers on the map.
  const lastOp = want.operators.filter((o) => o.scope >= 0).sort((x, y) => x.scope - y.scope).at(-1);
  const opIndex = want.operators.indexOf(lastOp);
  assert.equal(await page.$eval('[data-testid="op-step"]', (e) => Number(e.getAttribute("data-op"))), opIndex);
  assert.ok(await page.$('[data-testid="map-step"] rect.out'), "the op's output is outlined on the map");
  assert.match(await page.textContent('[data-testid="step-text"]'), new RegExp(`#${lastOp.index} ${lastOp.opcode} runs at scope ${lastOp.scope}: .*${lastOp.live_bytes.toLocaleString("en-US")} B`));

  // Home, arrows and Page Down move by step and by phase.
  await press(page, "Home");
  assert.equal((await scrubber(page)).at, 0);
  await press(page, "ArrowRight");
  assert.equal((await scrubber(page)).at, 1);
  await press(page, "PageDown");
  assert.equal((await scrubber(page)).at, phase.prepare.first);
  assert.match(await page.textContent('[data-testid="step-text"]'), /^#0 \S+ Prepare/);
  assert.equal(await page.$eval('[data-testid="op-step"]', (e) => e.getAttribute("data-op")), "0");
  await page.locator('[data-testid="steps-panel"]').screenshot({ path: join(SHOTS, "steps-prepare.png") });

  // The planner: each placement says where it goes and the map outlines it.
  await page.click('[data-testid="step-phase"][data-phase="plan"]');
  assert.equal((await scrubber(page)).at, phase.plan.first);
  while (!/placed at offset/.test(await page.textContent('[data-testid="step-text"]'))) await press(page, "ArrowRight");
  assert.ok(await page.$('[data-testid="map-step"] rect.now'), "the buffer being placed is outlined");

  // Play advances by itself; Pause stops it.
  await page.click('[data-testid="step-play"]');
  await page.waitForFunction((from) => Number(document.querySelector('[data-testid="steps"]').getAttribute("data-at")) > from + 1, (await scrubber(page)).at);
  await page.click('[data-testid="step-play"]');
  const paused = await scrubber(page);
  assert.equal(paused.playing, false);
  await page.waitForTimeout(600);
  assert.equal((await scrubber(page)).at, paused.at);
  assert.equal(paused.reduced, false);

  // An Invoke step mid-way, for the screenshot.
  await page.click('[data-testid="step-phase"][data-phase="invoke"]');
  for (let i = 0; i < 5; i++) await press(page, "ArrowRight");
  await shootStepAndMap(page, "steps-invoke.png");

  // Any model: a dropped one ends on its own report too.
  const rp = exampleFile("rp2040-cnn.tflite", "--name", "rp2040-cnn");
  const wantRp = planJson(rp).json;
  await openModel(page, rp, "rp2040-cnn.tflite");
  assert.equal(await page.$('[data-testid="steps"]'), null, "a new model closes the old steps");
  await openSteps(page);
  await press(page, "End");
  const r = wantRp.arena;
  assert.deepEqual(await stepFigures(page), { head: r.head_bytes, tail: r.tail_bytes, arena: r.total_bytes, minimum: r.minimum_bytes });

  // The greedy planner passing over a gap too small (a synthetic network has one).
  const syn = join(TMP, "synthetic60.tflite");
  coreExample("synthetic", "60", syn);
  const wantSyn = planJson(syn).json;
  await openModel(page, syn, "synthetic60.tflite");
  await openSteps(page);
  const ss = await scrubber(page);
  const plan = ss.phases.find((p) => p.phase === "plan");
  await page.click('[data-testid="step-phase"][data-phase="plan"]');
  let gapStep = null;
  for (let i = 0; i < plan.count && !gapStep; i++) {
    const text = await page.textContent('[data-testid="step-text"]');
    if (/too big for/.test(text)) gapStep = text;
    else await press(page, "ArrowRight");
  }
  assert.ok(gapStep, "some buffer could not use a gap");
  assert.ok(await page.$('[data-testid="map-step"] rect.gap'), "the rejected gap is drawn");
  const [name, , offset] = gapStep.match(/'([^']+)' \(([\d,]+) B.*placed at offset ([\d,]+)/).slice(1);
  const placed = wantSyn.buffers.find((x) => x.name === name);
  assert.equal(offset.replaceAll(",", ""), String(placed.offset), "placed where `plan --json` says");
  await shootStepAndMap(page, "steps-plan.png");
  await press(page, "End");
  const y = wantSyn.arena;
  assert.deepEqual(await stepFigures(page), { head: y.head_bytes, tail: y.tail_bytes, arena: y.total_bytes, minimum: y.minimum_bytes });
  assert.deepEqual(problems, []);
  await close();

  // Reduced motion: the scrubber knows and plays one step a second.
  const calm = await h.newPage(h.base, { reducedMotion: "reduce" });
  await waitForMap(calm.page, EXAMPLE);
  await openSteps(calm.page);
  assert.equal((await scrubber(calm.page)).reduced, true);
  assert.deepEqual(calm.problems, []);
  await calm.close();
});

// The summary's figures, as `plan --json` names them.
async function summaryFigures(page) {
  return {
    head: await bytesOf(page, "arena-head"),
    tail: await bytesOf(page, "arena-tail"),
    total: await bytesOf(page, "arena-total"),
    minimum: await bytesOf(page, "arena-minimum"),
  };
}
const arenaOf = (r) => ({ head: r.arena.head_bytes, tail: r.arena.tail_bytes, total: r.arena.total_bytes, minimum: r.arena.minimum_bytes });

// Drop → numbers: from handing the page a file to its summary figures on
// screen, to the arena map, and to every view drawn.
async function timeOpen(page, path, name) {
  const before = await page.evaluate(() => window.__microarena?.seq ?? 0);
  const t0 = Date.now();
  await page.setInputFiles('[data-testid="model-input"]', path);
  await page.waitForSelector(`[data-testid="summary"][data-file="${name}"]`, { timeout: 30000 });
  const numbers = Date.now() - t0;
  await waitForMap(page, name);
  const map = Date.now() - t0;
  await page.waitForFunction((prev) => (window.__microarena?.seq ?? 0) !== prev, before, { timeout: 30000 });
  return { numbers, map, all: Date.now() - t0 };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

test("large models: a 2,338-op model gives numbers in under 1 s, zooms to a scope window, virtualises its tables and groups its diagnostics", async () => {
  const big = join(TMP, "synthetic2338.tflite");
  coreExample("synthetic", "2338", big);
  const custom = join(TMP, "accel2338.tflite");
  coreExample("synthetic", "2338", custom, "--custom-every", "5");
  const example = exampleFile("example-bench.tflite");
  const want = planJson(big).json;
  const { page, problems, close } = await h.newPage();
  await waitForMap(page, EXAMPLE);

  // Benchmark: alternate the default model and the large one, five runs each.
  const runs = { example: [], big: [] };
  for (let k = 0; k < 5; k++) {
    runs.example.push(await timeOpen(page, example, "example-bench.tflite"));
    runs.big.push(await timeOpen(page, big, "synthetic2338.tflite"));
  }
  const worker = await page.evaluate(() => window.__microarenaWorker);
  const fmt = (rs) => `numbers ${median(rs.map((r) => r.numbers))} ms (runs ${rs.map((r) => r.numbers).join(", ")}), map ${median(rs.map((r) => r.map))} ms, all views ${median(rs.map((r) => r.all))} ms`;
  console.log(`# perf default model (${EXAMPLE}, 31 ops): drop → ${fmt(runs.example)}`);
  console.log(`# perf synthetic 2,338 ops (${want.buffers.length} buffers): drop → ${fmt(runs.big)}; worker phases ${JSON.stringify(worker)}`);
  assert.ok(median(runs.big.map((r) => r.numbers)) < 1000, "a 2,338-op model's numbers in under 1 s");
  assert.deepEqual(await summaryFigures(page), arenaOf(want));

  // The lifetimes and per-op bars open on a window around the peak; the strip shows the whole model.
  const peak = want.arena.peak_scope;
  const lt = () => page.$eval('[data-testid="lifetimes"]', (e) => ({ lo: Number(e.dataset.lo), hi: Number(e.dataset.hi), rows: Number(e.dataset.rows) }));
  const w = await lt();
  assert.ok(w.lo <= peak && peak <= w.hi && w.hi - w.lo + 1 <= 240, JSON.stringify(w));
  const alive = want.buffers.filter((b) => b.first <= w.hi && b.last >= w.lo).length;
  assert.equal(w.rows, alive + want.variables.filter((v) => v.region !== "head").length, "a row per buffer alive in the window");
  const bars = () => page.$eval('[data-testid="op-bars"]', (e) => ({ first: Number(e.dataset.first), count: Number(e.dataset.count) }));
  const inWindow = want.operators.map((o, i) => [o, i]).filter(([o]) => o.scope >= w.lo && o.scope <= w.hi).map(([, i]) => i);
  assert.deepEqual(await bars(), { first: inWindow[0], count: inWindow.at(-1) - inWindow[0] + 1 });
  assert.equal(await page.$eval('[data-testid="overview-strip"]', (e) => Number(e.dataset.scopes)), want.arena.max_scope + 1);
  await page.locator('[data-testid="overview"]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, "large-window.png") });
  // Typed bounds, and the whole model.
  await page.fill('[data-testid="window-lo"]', "100");
  await page.press('[data-testid="window-lo"]', "Enter");
  await page.fill('[data-testid="window-hi"]', "139");
  await page.press('[data-testid="window-hi"]', "Enter");
  await page.waitForFunction(() => document.querySelector('[data-testid="lifetimes"]').dataset.lo === "100" && document.querySelector('[data-testid="lifetimes"]').dataset.hi === "139");
  const typed = want.operators.map((o, i) => [o, i]).filter(([o]) => o.scope >= 100 && o.scope <= 139).map(([, i]) => i);
  assert.deepEqual(await bars(), { first: typed[0], count: typed.length });
  await page.click('[data-testid="window-all"]');
  await page.waitForFunction((hi) => document.querySelector('[data-testid="lifetimes"]').dataset.hi === String(hi), want.arena.max_scope);

  // Tables draw only the rows in view, yet scroll over all of them.
  const table = async (id) => page.$eval(`[data-testid="${id}"]`, (t) => ({
    drawn: t.querySelectorAll("tbody tr:not(.spacer)").length,
    height: [...t.querySelectorAll("tbody tr")].reduce((s, r) => s + r.getBoundingClientRect().height, 0),
  }));
  for (const [id, n] of [["op-table", want.operators.length], ["tensor-table", want.buffers.length]]) {
    const t = await table(id);
    assert.ok(t.drawn < 60, `${id}: ${t.drawn} rows drawn`);
    assert.ok(Math.abs(t.height - n * 27) < 27 * 2, `${id}: ${t.height} px for ${n} rows`);
  }
  const wrap = page.locator('[data-testid="op-table"]').locator("xpath=..");
  await wrap.evaluate((e) => { e.scrollTop = e.scrollHeight; });
  await page.waitForFunction(() => {
    const rows = [...document.querySelectorAll('[data-testid="op-table"] tbody tr[data-row]')];
    return rows.length > 0 && rows.at(-1).nextElementSibling === null;
  });
  assert.ok((await table("op-table")).drawn < 60);

  // Grouped diagnostics: 2,338 ops with a custom op every fifth ADD.
  const wantC = planJson(custom).json;
  await openModel(page, custom, "accel2338.tflite");
  const accel = wantC.diagnostics.filter((d) => d.message.includes("custom op 'ACCEL_ADD'"));
  assert.ok(accel.length > 200, `${accel.length} custom-op errors`);
  const groups = await page.$$eval('[data-testid="diag-group"]', (gs) => gs.map((g) => ({ count: Number(g.dataset.count), opcode: g.dataset.opcode })));
  assert.deepEqual(groups, [{ count: accel.length, opcode: "ACCEL_ADD" }]);
  assert.equal(await page.$eval('[data-testid="diagnostics"]', (e) => Number(e.dataset.count)), wantC.diagnostics.length);
  assert.equal(await page.$$eval('[data-testid="diagnostics"] > li', (l) => l.length), wantC.diagnostics.length - accel.length + 1);
  await page.click('[data-testid="diag-group"] summary');
  await page.waitForSelector('[data-testid="diag-places"]');
  const places = await page.$$eval('[data-testid="diag-places"] li', (l) => l.map((x) => x.textContent));
  assert.deepEqual(places, accel.map((d) => `op ${d.message.match(/subgraph 0 op (\d+)/)[1]}`));
  await page.locator('[data-testid="diagnostics"]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, "large-diagnostics.png") });

  // The step-through works at this size too, and ends on the report.
  await openModel(page, big, "synthetic2338.tflite");
  const t0 = Date.now();
  await openSteps(page);
  console.log(`# step-through of 2,338 ops: ${(await scrubber(page)).steps} steps ready in ${Date.now() - t0} ms`);
  await press(page, "End");
  assert.deepEqual(await stepFigures(page), { head: want.arena.head_bytes, tail: want.arena.tail_bytes, arena: want.arena.total_bytes, minimum: want.arena.minimum_bytes });
  await page.click('[data-testid="step-phase"][data-phase="invoke"]');
  for (let i = 0; i < 3; i++) await press(page, "ArrowRight");
  await page.screenshot({ path: join(SHOTS, "large-steps.png"), fullPage: true });
  assert.deepEqual(problems, []);
  await close();
});

// The compare panel's rows: name → {old, new, delta} as the page holds them.
async function compareRows(page, id) {
  return page.$$eval(`[data-testid="${id}"]`, (rs) => rs.map((r) => ({
    name: r.dataset.name,
    old_bytes: r.dataset.old === "" ? null : Number(r.dataset.old),
    new_bytes: r.dataset.new === "" ? null : Number(r.dataset.new),
    delta_bytes: r.dataset.delta === "" ? null : Number(r.dataset.delta),
  })));
}

async function exportedDiff(page) {
  const [download] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="compare-json"]')]);
  return readFileSync(await download.path(), "utf8");
}

// Runs `action` and waits until the comparison shows `file` on `target`.
async function compareWith(page, file, target, action) {
  await action();
  await page.waitForSelector(`[data-testid="compare"][data-new-file="${file}"][data-new-target="${target}"]`, { timeout: 60000 });
}

test("compare: an optimized copy, another model and another target equal `diff --json` / `plan --json`; the link carries both layouts", async () => {
  const dir = join(TMP, "offline");
  mkdirSync(dir, { recursive: true });
  coreExample("offline_demo", dir);
  const model = join(dir, "offline_demo_895.tflite");
  const name = "offline_demo_895.tflite";
  const opt = join(dir, "offline_demo_895.optimized.tflite");
  assert.equal(cli("optimize", model, "-o", opt, "--target", APP_TARGET).code, 0);
  const { page, problems, close } = await h.newPage();
  await waitForMap(page, EXAMPLE);
  await openModel(page, model, name);

  // Its optimized copy: the page's diff is `microarena diff` of the model and what `optimize` wrote.
  await compareWith(page, "offline_demo_895.optimized.tflite", APP_TARGET, () => page.click('[data-testid="compare-optimized"]'));
  const want = cli("diff", model, opt, "--target", APP_TARGET, "--json");
  assert.equal(want.code, 0, want.stderr);
  const d = JSON.parse(want.stdout);
  assert.ok(d.figures.find((f) => f.name === "head").delta_bytes < 0, "optimize lowers the head");
  assert.deepEqual(await compareRows(page, "compare-figure"), d.figures);
  assert.deepEqual(await compareRows(page, "compare-tensor"), d.tensors);
  assert.deepEqual(await compareRows(page, "compare-tail"), d.tail);
  assert.equal(await exportedDiff(page), want.stdout, "exported JSON = diff --json");
  await page.locator('[data-testid="compare-panel"]').scrollIntoViewIfNeeded();
  await page.locator('[data-testid="compare-panel"]').screenshot({ path: join(SHOTS, "compare-optimized.png") });

  // The link opens both layouts in a fresh page, with the same difference.
  const link = await page.$eval('[data-testid="compare-link"]', (e) => e.href);
  assert.match(link, /#c=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  const fresh = await h.newPage(link);
  await fresh.page.waitForSelector('[data-testid="compare"]', { timeout: 30000 });
  assert.deepEqual(await compareRows(fresh.page, "compare-figure"), d.figures);
  assert.equal(await exportedDiff(fresh.page), want.stdout);
  assert.deepEqual(fresh.problems, []);
  await fresh.close();

  // Another model: `diff` of the two files.
  const example = exampleFile("example-compare.tflite");
  await openModel(page, example, "example-compare.tflite");
  assert.equal(await page.$('[data-testid="compare"]'), null, "a new model closes the old comparison");
  const rp = exampleFile("rp2040-cnn-compare.tflite", "--name", "rp2040-cnn");
  await compareWith(page, "rp2040-cnn-compare.tflite", APP_TARGET, () => page.setInputFiles('[data-testid="compare-input"]', rp));
  const wantModels = cli("diff", example, rp, "--target", APP_TARGET, "--json");
  assert.equal(await exportedDiff(page), wantModels.stdout, "exported JSON = diff --json");
  assert.deepEqual(await compareRows(page, "compare-figure"), JSON.parse(wantModels.stdout).figures);

  // Another target of the same model: each side is that target's `plan --json`.
  await compareWith(page, "example-compare.tflite", "cortex-m4-cmsis-nn", async () => {
    await page.selectOption('[data-testid="compare-target"]', "cortex-m4-cmsis-nn");
    await page.click('[data-testid="compare-target-go"]');
  });
  const a = planJson(example).json;
  const b = planJson(example, "--target", "cortex-m4-cmsis-nn").json;
  const figures = Object.fromEntries((await compareRows(page, "compare-figure")).map((f) => [f.name, f]));
  for (const [k, key] of [["head", "head_bytes"], ["tail", "tail_bytes"], ["total", "total_bytes"], ["minimum", "minimum_bytes"], ["padding", "padding_bytes"]]) {
    assert.deepEqual(figures[k], { name: k, old_bytes: a.arena[key], new_bytes: b.arena[key], delta_bytes: b.arena[key] - a.arena[key] }, k);
  }
  const cat = (r) => Object.fromEntries(r.tail.map((c) => [c.category, c.bytes]));
  const [ca, cb] = [cat(a), cat(b)];
  for (const row of await compareRows(page, "compare-tail")) {
    assert.equal(row.old_bytes, ca[row.name] ?? null, row.name);
    assert.equal(row.new_bytes, cb[row.name] ?? null, row.name);
  }
  assert.ok((await compareRows(page, "compare-tail")).length > 0, "CMSIS-NN changes the tail");
  assert.equal(await page.$eval('[data-testid="compare-new"]', (e) => Number(e.dataset.head)), b.arena.head_bytes);
  await page.locator('[data-testid="compare-panel"]').screenshot({ path: join(SHOTS, "compare-targets.png") });
  assert.deepEqual(problems, []);
  await close();
});

// The measured figures as the page shows them, in `check --json`'s shape.
async function measuredShown(page) {
  const figures = await page.$$eval('[data-testid="measured-figure"]', (rs) => rs.map((r) => {
    const f = { bytes: Number(r.dataset.bytes), name: r.dataset.name, source: r.dataset.source };
    if (r.dataset.highWater !== "") f.high_water_bytes = Number(r.dataset.highWater);
    if (r.dataset.reserved !== "") f.reserved_bytes = Number(r.dataset.reserved);
    return f;
  }));
  const v = await page.$eval('[data-testid="measured-verdict"]', (e) => ({
    arena_bytes: Number(e.dataset.arena), available_bytes: Number(e.dataset.available),
    margin_bytes: Number(e.dataset.margin), fits: e.dataset.fits === "true",
  }));
  return { ...v, figures };
}

const checkShape = (c) => ({
  arena_bytes: c.arena_bytes, available_bytes: c.available_bytes, margin_bytes: c.margin_bytes, fits: c.fits,
  figures: c.measured.figures,
});

test("measured figures in the budget: the firmware's report line gives `check --measured`'s verdict, each figure tagged as the CLI tags it", async () => {
  const model = exampleFile("rp2040-anomaly.tflite", "--name", "rp2040-anomaly");
  const line = join(ROOT, "docs", "rp2040-anomaly-report.txt");
  const { page, problems, close } = await h.newPage();
  await waitForMap(page, EXAMPLE);
  await openModel(page, model, "rp2040-anomaly.tflite");
  await page.fill('[data-testid="measured-input"]', readFileSync(line, "utf8"));
  await page.waitForSelector('[data-testid="measured-verdict"]');
  const withModel = cli("check", model, "--measured", line, "--target", APP_TARGET, "--json");
  assert.equal(withModel.code, 1, "the anomaly detector does not fit beside its RTOS");
  assert.deepEqual(await measuredShown(page), checkShape(JSON.parse(withModel.stdout)));
  await page.locator('[data-testid="measured"]').scrollIntoViewIfNeeded();
  await page.locator('section.panel:has([data-testid="measured"])').screenshot({ path: join(SHOTS, "budget-measured.png") });

  // The device's own arena high-water instead of the model's minimum: `check --measured` without a model.
  await page.check('[data-testid="measured-device-minimum"]');
  const deviceOnly = cli("check", "--measured", line, "--json");
  await page.waitForFunction((m) => document.querySelector('[data-testid="measured-verdict"]')?.dataset.margin === String(m),
    JSON.parse(deviceOnly.stdout).margin_bytes);
  assert.deepEqual(await measuredShown(page), checkShape(JSON.parse(deviceOnly.stdout)));
  await page.uncheck('[data-testid="measured-device-minimum"]');

  // A file of QEMU's whole output works as well; a line that is none is refused with the CLI's words.
  const qemu = join(TMP, "qemu-output.txt");
  writeFileSync(qemu, `booting\nsome log line\n${readFileSync(line, "utf8")}\nexit 0\n`);
  await page.fill('[data-testid="measured-input"]', "");
  await page.setInputFiles('[data-testid="measured-file"]', qemu);
  await page.waitForSelector('[data-testid="measured-verdict"]');
  assert.deepEqual(await measuredShown(page), checkShape(JSON.parse(withModel.stdout)));
  const junk = join(TMP, "junk.txt");
  writeFileSync(junk, "no report here\n");
  const refused = cli("check", model, "--measured", junk, "--target", APP_TARGET);
  await page.fill('[data-testid="measured-input"]', "no report here\n");
  const why = await page.textContent('[data-testid="measured-error"]');
  assert.ok(refused.stderr.includes(why), `page: ${why}\ncli: ${refused.stderr}`);
  assert.deepEqual(problems, []);
  await close();
});

test("the firmware's ELF in the budget gives `check --elf`'s verdict; a report line from another build is refused with the CLI's words", async () => {
  const model = exampleFile();
  const elf = join(TMP, "fw.elf");
  runExample("microarena-cli", "firmware_elf", elf);
  const { page, problems, close } = await h.newPage();
  await waitForMap(page, EXAMPLE);
  await openModel(page, model, "example.tflite");
  await page.setInputFiles('[data-testid="measured-file"]', elf);
  await page.waitForSelector('[data-testid="measured-verdict"]');
  assert.equal(await page.getAttribute('[data-testid="measured-elf"]', "data-name"), "fw.elf");
  const linked = cli("check", model, "--elf", elf, "--target", APP_TARGET, "--json");
  assert.ok(linked.code === 0 || linked.code === 1, linked.stderr);
  assert.deepEqual(await measuredShown(page), checkShape(JSON.parse(linked.stdout)));
  // The rp2040 anomaly detector's report line was not printed by this ELF's build.
  const line = join(ROOT, "docs", "rp2040-anomaly-report.txt");
  const mixed = cli("check", model, "--elf", elf, "--measured", line, "--target", APP_TARGET);
  assert.equal(mixed.code, 2);
  await page.fill('[data-testid="measured-input"]', readFileSync(line, "utf8"));
  const why = await page.textContent('[data-testid="measured-error"]');
  assert.ok(mixed.stderr.includes(why), `page: ${why}\ncli: ${mixed.stderr}`);
  assert.deepEqual(problems, []);
  await close();
});

test("lessons: a five-step tour on the example and on a dropped model, each step ringing a live figure equal to `plan --json`", async () => {
  const { page, problems, close } = await h.newPage();
  await waitForMap(page, EXAMPLE);
  const file = exampleFile();
  const want = planJson(file).json;
  const check = JSON.parse(cli("check", file, "--target", APP_TARGET, "--ram", "4M", "--json").stdout);
  const expectedFigures = [want.arena.head_bytes, want.arena.minimum_bytes, want.arena.padding_bytes, want.flash.file_bytes, check.arena_bytes];
  const tour = async (figures, shots) => {
    await page.click('[data-testid="lessons-start"]');
    for (let k = 0; k < 5; k++) {
      await page.waitForSelector(`[data-testid="lesson"][data-index="${k}"]`);
      const l = await page.$eval('[data-testid="lesson"]', (e) => ({ target: e.dataset.target, attr: e.dataset.attr, bytes: Number(e.dataset.bytes) }));
      const onScreen = await page.$eval(`[data-testid="${l.target}"]`, (e, a) => Number(e.getAttribute(a)), l.attr);
      assert.equal(l.bytes, onScreen, `lesson ${k} points at ${l.target}`);
      assert.equal(l.bytes, figures[k], `lesson ${k}: plan --json`);
      assert.ok(await page.$(".tour-ring"), "the figure is ringed");
      const text = await page.textContent('[data-testid="lesson-text"]');
      assert.ok(text.includes(l.bytes.toLocaleString("en-US")), text);
      if (shots[k]) await page.screenshot({ path: join(SHOTS, shots[k]) });
      await page.click('[data-testid="lesson-next"]');
    }
    assert.equal(await page.$('[data-testid="lesson"]'), null, "Done closes the tour");
  };
  await openModel(page, file, "example.tflite");
  await tour(expectedFigures, { 0: "lesson-regions.png", 3: "lesson-flash.png" });
  // Escape closes it too.
  await page.click('[data-testid="lessons-start"]');
  await page.waitForSelector('[data-testid="lesson"]');
  await page.keyboard.press("Escape");
  assert.equal(await page.$('[data-testid="lesson"]'), null);
  // Any model: a dropped one gets the same tour on its own figures.
  const rp = exampleFile("rp2040-cnn-lessons.tflite", "--name", "rp2040-cnn");
  const w = planJson(rp).json;
  const c = JSON.parse(cli("check", rp, "--target", APP_TARGET, "--ram", "4M", "--json").stdout);
  await openModel(page, rp, "rp2040-cnn-lessons.tflite");
  await tour([w.arena.head_bytes, w.arena.minimum_bytes, w.arena.padding_bytes, w.flash.file_bytes, c.arena_bytes], {});
  assert.deepEqual(problems, []);
  await close();
});

// axe-core (npm), injected into the page: the serious and critical violations.
async function axe(page, what) {
  await page.addScriptTag({ path: join(ROOT, "e2e", "node_modules", "axe-core", "axe.min.js") });
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length, first: v.nodes[0]?.target?.join(" ") }));
  });
  const bad = found.filter((v) => v.impact === "serious" || v.impact === "critical");
  console.log(`# axe ${what}: ${found.length} violation kinds, ${bad.length} serious or critical${found.length ? ": " + found.map((v) => `${v.id} (${v.impact}, ${v.nodes})`).join(", ") : ""}`);
  return bad;
}

test("accessibility: axe-core finds no serious violation in the main views (dashboard, step-through, comparison, lessons, a large model, a shared link)", async () => {
  const { page, problems, close } = await h.newPage();
  await waitForMap(page, EXAMPLE);
  await page.waitForSelector('[data-testid="share-link"]');
  assert.deepEqual(await axe(page, "dashboard"), []);
  await openSteps(page);
  await page.click('[data-testid="step-phase"][data-phase="invoke"]');
  assert.deepEqual(await axe(page, "step-through"), []);
  await page.click('[data-testid="compare-target-go"]');
  await page.waitForSelector('[data-testid="compare"]', { timeout: 60000 });
  assert.deepEqual(await axe(page, "comparison"), []);
  await page.fill('[data-testid="measured-input"]', readFileSync(join(ROOT, "docs", "rp2040-anomaly-report.txt"), "utf8"));
  await page.waitForSelector('[data-testid="measured-verdict"]');
  await page.click('[data-testid="lessons-start"]');
  await page.waitForSelector('[data-testid="lesson"]');
  assert.deepEqual(await axe(page, "lessons and measured budget"), []);
  await page.keyboard.press("Escape");
  const big = join(TMP, "accel2338-axe.tflite");
  coreExample("synthetic", "2338", big, "--custom-every", "5");
  await openModel(page, big, "accel2338-axe.tflite");
  await page.click('[data-testid="diag-group"] summary');
  assert.deepEqual(await axe(page, "2,338-op model"), []);
  const link = await page.$eval('[data-testid="share-link"]', (e) => e.href);
  const shared = await h.newPage(link);
  await waitForMap(shared.page, "accel2338-axe.tflite");
  assert.deepEqual(await axe(shared.page, "shared layout"), []);
  await shared.close();
  assert.deepEqual(problems, []);
  await close();
});
