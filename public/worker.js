// The analysis worker: the same wasm as the page. Its start function sees
// that there is no window and answers analysis requests instead of mounting.
import init from "./microarena-app.js";

const queued = [];
self.onmessage = (ev) => queued.push(ev);
init().then(() => {
  for (const ev of queued) self.onmessage(ev);
});
