// utils/bench/ort_growth_noarena.mjs: ONNX Runtime's RSS growth over one run with its CPU arena and memory
// pattern OFF (docs/fusion.md). Usage: node utils/bench/ort_growth_noarena.mjs MODEL.onnx image|text B [S]
// (image: input [B,3,224,224] float; text: every input int64 [B,S]). ORT_NODE_DIR: onnxruntime-node's folder.
// glibc's malloc keeps freed memory resident and hands it out again, so a run's RSS growth can be far
// below its peak of live bytes (resnet50 b8: 26 MB to 52 MB over repeated runs, under the 41.7 MB its
// three largest simultaneously live tensors hold). With every allocation of 64 KiB or more its own
// mmap, returned on free, the growth is the peak of live bytes (41.9 MB to 42.0 MB): the script runs
// itself again with that setting unless GLIBC_TUNABLES is already set (and with --expose-gc: a V8
// garbage collection during the run frees about 1 MB counted before it, so it collects first).
import fs from "node:fs";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
if (!process.env.GLIBC_TUNABLES) {
  const r = spawnSync(process.execPath, ["--expose-gc", ...process.argv.slice(1)], { stdio: "inherit", env: {
    ...process.env, GLIBC_TUNABLES: "glibc.malloc.mmap_threshold=65536:glibc.malloc.trim_threshold=0" } });
  process.exit(r.status ?? 1);
}
const require = createRequire(import.meta.url);
const ort = require((process.env.ORT_NODE_DIR || "/tmp/ort/node_modules/onnxruntime-node"));
const [model, kind, B, S] = process.argv.slice(2);
const b = Number(B), s = Number(S || 0);
function vm(key) {
  const t = fs.readFileSync("/proc/self/status", "utf8");
  return Number(t.match(new RegExp(key + ":\\s+(\\d+)"))[1]) * 1024;
}
const sess = await ort.InferenceSession.create(model, {
  enableCpuMemArena: false, enableMemPattern: false, intraOpNumThreads: 2,
  interOpNumThreads: 1, graphOptimizationLevel: "all" });
const feeds = {};
if (kind === "image") {
  const n = b * 3 * 224 * 224;
  const d = new Float32Array(n); for (let i = 0; i < n; ++i) d[i] = Math.sin(i);
  feeds[sess.inputNames[0]] = new ort.Tensor("float32", d, [b, 3, 224, 224]);
} else {
  for (const name of sess.inputNames) {
    const d = new BigInt64Array(b * s);
    for (let i = 0; i < b * s; ++i) d[i] = name.includes("mask") ? 1n : BigInt(i % 100);
    feeds[name] = new ort.Tensor("int64", d, [b, s]);
  }
}
// A garbage collection during the run would free pages counted before it: collect now.
if (typeof gc === "function") { gc(); gc(); }
fs.writeFileSync("/proc/self/clear_refs", "5");
const before = vm("VmRSS");
await sess.run(feeds);
const hwm = vm("VmHWM");
console.log(JSON.stringify({ model, b, s, growth: hwm - before }));
