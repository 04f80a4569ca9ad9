// Runs the determinism probe (core/examples/plan_hash.rs) built for
// wasm32-unknown-unknown and checks it computes the pinned hash, i.e. the
// same plans as the native build (core/tests/wasm_determinism.rs).
// usage: node scripts/wasm-plan-hash.mjs target/wasm32-unknown-unknown/release/examples/plan_hash.wasm
import { readFileSync } from "node:fs";

const { instance } = await WebAssembly.instantiate(readFileSync(process.argv[2]), {});
const got = BigInt.asUintN(64, instance.exports.microarena_plan_hash());
const want = BigInt.asUintN(64, instance.exports.microarena_expected_hash());
const hex = (v) => "0x" + v.toString(16).padStart(16, "0");
if (got !== want) {
  console.error(`wasm32 plan hash ${hex(got)} != pinned ${hex(want)}`);
  process.exit(1);
}
console.log(`wasm32 plan hash ${hex(got)} matches the native one`);
