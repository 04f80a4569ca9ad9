// Browser tests of the views that teach (issue 31): the step-through,
// grouped diagnostics and large models, the comparison, measured figures in
// the budget, the lessons and an accessibility check. Run: node --test e2e/
// Every figure on the page is compared with `microarena plan --json` / `diff --json`.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { SHOTS, TMP, EXAMPLE, planJson, exampleFile, coreExample, start, waitForMap, openModel, bytesOf } from "./harness.mjs";

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
