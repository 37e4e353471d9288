// utils/ort_growth_noarena.mjs: ONNX Runtime's RSS growth over one run with its CPU arena and memory
// pattern OFF (docs/fusion.md, issue 15 bars). Usage: node utils/ort_growth_noarena.mjs MODEL.onnx image|text B [S]
// (image: input [B,3,224,224] float; text: every input int64 [B,S]). ORT_NODE_DIR: onnxruntime-node's folder.
import fs from "node:fs";
import { createRequire } from "node:module";
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
fs.writeFileSync("/proc/self/clear_refs", "5");
const before = vm("VmRSS");
await sess.run(feeds);
const hwm = vm("VmHWM");
console.log(JSON.stringify({ model, b, s, growth: hwm - before }));
