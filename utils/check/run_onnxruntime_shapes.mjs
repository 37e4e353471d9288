// Runs an ONNX model with ONNX Runtime (npm package onnxruntime-node) and
// prints, as JSON on stdout, the element type and dims of every output the
// run produced. It is the runtime half of utils/check/compare_shapes_with_runtime.py,
// which prepares the model (extra graph outputs for intermediate values, a
// zero-filled weights file) and the inputs, and compares the result with
// `oomplan --emit=shapes`.
//
// How: node run_onnxruntime_shapes.mjs MODEL.onnx INPUTS.json
//   INPUTS.json: {"inputs": [{"name", "type" (ORT type: "float32", "int64",
//   ...), "dims": [..], "file": raw little-endian tensor data}],
//   "optimization": "all" | "basic" | "extended" | "disabled",
//   "threads": N,
//   "max_values": N (default 64)}
// Output: {"ort_version": "...", "outputs": [{"name", "type", "dims",
//   "values" (contents, for numeric tensors of at most max_values elements)}]}
//
// onnxruntime-node is resolved from ORT_NODE_DIR (a folder with
// node_modules/onnxruntime-node, e.g. /tmp/ort after
// `npm install onnxruntime-node --onnxruntime-node-install=skip`), so it never
// needs to be installed inside the repository.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const [modelPath, inputsPath] = process.argv.slice(2);
if (!modelPath || !inputsPath) {
  console.error("usage: run_onnxruntime_shapes.mjs MODEL.onnx INPUTS.json");
  process.exit(2);
}
const ortDir = process.env.ORT_NODE_DIR || "/tmp/ort";
const require = createRequire(path.join(path.resolve(ortDir), "package.json"));
const ort = require("onnxruntime-node");

const arrayTypes = {
  float32: Float32Array,
  float64: Float64Array,
  int8: Int8Array,
  uint8: Uint8Array,
  int16: Int16Array,
  uint16: Uint16Array,
  int32: Int32Array,
  uint32: Uint32Array,
  int64: BigInt64Array,
  uint64: BigUint64Array,
  bool: Uint8Array,
  float16: Uint16Array,
};

function loadTensor(spec) {
  const Arr = arrayTypes[spec.type];
  if (!Arr) throw new Error(`unsupported input type ${spec.type}`);
  const raw = fs.readFileSync(spec.file);
  // Copy into a fresh, aligned ArrayBuffer.
  const buf = new ArrayBuffer(raw.length);
  new Uint8Array(buf).set(raw);
  const count = spec.dims.reduce((a, b) => a * b, 1);
  const data = new Arr(buf, 0, count);
  return new ort.Tensor(spec.type, data, spec.dims);
}

const cfg = JSON.parse(fs.readFileSync(inputsPath, "utf8"));
const feeds = {};
for (const spec of cfg.inputs) feeds[spec.name] = loadTensor(spec);

const session = await ort.InferenceSession.create(modelPath, {
  graphOptimizationLevel: cfg.optimization || "all",
  intraOpNumThreads: cfg.threads || 1,
  interOpNumThreads: 1,
  executionProviders: ["cpu"],
});
const results = await session.run(feeds);
const maxValues = cfg.max_values ?? 64;
const outputs = [];
for (const name of session.outputNames) {
  const t = results[name];
  const out = { name, type: t.type, dims: Array.from(t.dims, Number) };
  // Contents of small numeric tensors (shape tensors), to check the values
  // oomplan propagates; BigInts as decimal strings.
  if (t.size <= maxValues && t.type in arrayTypes && t.type !== "float16")
    out.values = Array.from(t.data, (v) =>
      typeof v === "bigint" ? v.toString() : Number(v));
  outputs.push(out);
}
process.stdout.write(
  JSON.stringify({ ort_version: ort.env.versions.common, outputs }) + "\n");
