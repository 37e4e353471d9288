// Runs an ONNX model with ONNX Runtime (npm package onnxruntime-node) on given
// TensorProto inputs, writes its outputs as TensorProto .pb files, and measures
// latency and the process's peak RSS growth. It is ONNX Runtime's half of
// utils/bench/compare_runtime.py (outputs) and utils/bench/bench_runtime.py (latency,
// memory), the reference that oomplan-run is compared with.
//
// How:
//   node utils/bench/run_onnxruntime.mjs MODEL.onnx --inputs-dir DIR [--output-dir DIR]
//        [--threads N] [--iterations N] [--warmup N] [--optimization all|...]
//   DIR/input_<i>.pb is graph input i (the session's input order, which is the
//   model's inputs minus initializers: ONNX test-data order, as oomplan-run).
//   Outputs: OUT/output_<i>.pb (TensorProto: dims, data_type, name, raw_data).
//   stdout: one JSON object {ort_version, threads, outputs: [{name, type, dims}],
//   first_run_s, latencies_s (one per timed iteration after the warm-up runs),
//   median_s, rss_before_bytes, rss_growth_bytes, hwm_reset, rss_start_bytes,
//   process_peak_growth_bytes}.
//
// RSS growth, measured as oomplan-run measures it: after the session is created
// (weights loaded) and the inputs are built, VmHWM is reset (write "5" to
// /proc/self/clear_refs), then every run (first, warm-up and timed) happens, and
// the growth is VmHWM afterwards minus VmRSS before the first run (and the
// same after the first run alone: *_first_run_bytes). It so counts
// ONNX Runtime's arena, memory pattern and thread buffers allocated by its runs,
// but not memory that session creation touched and freed into its arena (reused
// by the runs without growing RSS). process_peak_growth_bytes is the whole
// footprint: the process's peak RSS (loading or running) minus its RSS before
// the session was created (weights, prepacked copies, arena, everything).
// Session options are ONNX Runtime's defaults (graph optimization "all", CPU
// arena and memory pattern on) except the thread count: intraOpNumThreads is
// --threads (default 2), interOpNumThreads 1 (sequential execution, the default).
//
// onnxruntime-node is resolved from ORT_NODE_DIR (default /tmp/ort; a folder
// with node_modules/onnxruntime-node), so it is never installed in the repository.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

function usage(msg) {
  if (msg) console.error(`run_onnxruntime.mjs: error: ${msg}`);
  console.error(
    "usage: run_onnxruntime.mjs MODEL.onnx --inputs-dir DIR [--output-dir DIR] " +
      "[--threads N] [--iterations N] [--warmup N] [--optimization LEVEL]");
  process.exit(msg ? 1 : 2);
}

function parseArgs(argv) {
  const a = { threads: 2, iterations: 0, warmup: 0, optimization: "all" };
  for (let i = 0; i < argv.length; ++i) {
    const k = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`${k} needs a value`);
      return argv[++i];
    };
    if (k === "--inputs-dir") a.inputsDir = next();
    else if (k === "--output-dir") a.outputDir = next();
    else if (k === "--threads") a.threads = Number(next());
    else if (k === "--iterations") a.iterations = Number(next());
    else if (k === "--warmup") a.warmup = Number(next());
    else if (k === "--optimization") a.optimization = next();
    else if (k.startsWith("--")) usage(`unknown option ${k}`);
    else if (!a.model) a.model = k;
    else usage(`unexpected argument ${k}`);
  }
  if (!a.model || !a.inputsDir) usage("MODEL and --inputs-dir are required");
  for (const k of ["threads", "iterations", "warmup"])
    if (!Number.isInteger(a[k]) || a[k] < 0) usage(`--${k} must be an integer >= 0`);
  return a;
}

// ONNX TensorProto.DataType <-> ORT tensor type and typed array.
const onnxTypes = {
  1: ["float32", Float32Array], 2: ["uint8", Uint8Array], 3: ["int8", Int8Array],
  4: ["uint16", Uint16Array], 5: ["int16", Int16Array], 6: ["int32", Int32Array],
  7: ["int64", BigInt64Array], 9: ["bool", Uint8Array], 10: ["float16", Uint16Array],
  11: ["float64", Float64Array], 12: ["uint32", Uint32Array], 13: ["uint64", BigUint64Array],
};
const ortToOnnx = Object.fromEntries(Object.entries(onnxTypes).map(([k, v]) => [v[0], Number(k)]));

// Minimal protobuf reader for the TensorProto fields our scripts write: dims (1,
// packed or not), data_type (2), name (8), raw_data (9). Typed-field payloads
// (float_data ...) are refused with a clear error rather than misread.
function readVarint(buf, pos) {
  let v = 0n, shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw new Error("truncated varint");
    const b = buf[pos++];
    v |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return [v, pos];
    shift += 7n;
  }
}

function decodeTensor(file) {
  const buf = fs.readFileSync(file);
  const t = { dims: [], dataType: 0, name: "", raw: null };
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = readVarint(buf, pos);
    const field = Number(key >> 3n), wire = Number(key & 7n);
    if (wire === 0) {
      let v;
      [v, pos] = readVarint(buf, pos);
      if (field === 1) t.dims.push(Number(BigInt.asIntN(64, v)));
      else if (field === 2) t.dataType = Number(v);
    } else if (wire === 2) {
      let len;
      [len, pos] = readVarint(buf, pos);
      const end = pos + Number(len);
      if (end > buf.length) throw new Error(`${file}: truncated field ${field}`);
      const body = buf.subarray(pos, end);
      if (field === 1) {
        for (let p = 0; p < body.length;) {
          let v;
          [v, p] = readVarint(body, p);
          t.dims.push(Number(BigInt.asIntN(64, v)));
        }
      } else if (field === 8) t.name = body.toString("utf8");
      else if (field === 9) t.raw = body;
      else if (field >= 4 && field <= 7 || field === 10 || field === 11)
        throw new Error(`${file}: typed data fields are not supported; write raw_data`);
      pos = end;
    } else if (wire === 5) pos += 4;
    else if (wire === 1) pos += 8;
    else throw new Error(`${file}: unsupported protobuf wire type ${wire}`);
  }
  return t;
}

function toOrtTensor(ort, t, file) {
  const entry = onnxTypes[t.dataType];
  if (!entry) throw new Error(`${file}: unsupported data_type ${t.dataType}`);
  const [type, Arr] = entry;
  const count = t.dims.reduce((a, b) => a * b, 1);
  const raw = t.raw ?? Buffer.alloc(0);
  if (raw.length !== count * Arr.BYTES_PER_ELEMENT)
    throw new Error(`${file}: raw_data has ${raw.length} bytes, dims [${t.dims}] need ` +
                    `${count * Arr.BYTES_PER_ELEMENT}`);
  const ab = new ArrayBuffer(raw.length); // aligned copy
  new Uint8Array(ab).set(raw);
  return new ort.Tensor(type, new Arr(ab, 0, count), t.dims);
}

function varint(v) {
  let x = BigInt.asUintN(64, BigInt(v));
  const out = [];
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x) b |= 0x80;
    out.push(b);
  } while (x);
  return Buffer.from(out);
}

function encodeTensor(name, t) {
  const dataType = ortToOnnx[t.type];
  if (!dataType) throw new Error(`output '${name}': unsupported ORT type ${t.type}`);
  const data = t.data;
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const nameBuf = Buffer.from(name, "utf8");
  const parts = [];
  for (const d of t.dims) parts.push(varint(1 << 3), varint(d));
  parts.push(varint(2 << 3), varint(dataType));
  parts.push(varint((8 << 3) | 2), varint(nameBuf.length), nameBuf);
  parts.push(varint((9 << 3) | 2), varint(raw.length), raw);
  return Buffer.concat(parts);
}

function procStatus(key) {
  const m = fs.readFileSync("/proc/self/status", "utf8").match(new RegExp(`^${key}:\\s+(\\d+) kB`, "m"));
  if (!m) throw new Error(`no ${key} in /proc/self/status`);
  return Number(m[1]) * 1024;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const ortDir = process.env.ORT_NODE_DIR || "/tmp/ort";
  let ort;
  try {
    ort = createRequire(path.join(path.resolve(ortDir), "package.json"))("onnxruntime-node");
  } catch (e) {
    throw new Error(`cannot load onnxruntime-node from ${ortDir} (set ORT_NODE_DIR): ${e.message}`);
  }
  const rssStart = procStatus("VmRSS"); // the runtime's code loaded, no model yet
  const session = await ort.InferenceSession.create(args.model, {
    intraOpNumThreads: args.threads,
    interOpNumThreads: 1,
    executionProviders: ["cpu"],
    graphOptimizationLevel: args.optimization,
  });
  const feeds = {};
  session.inputNames.forEach((name, i) => {
    const file = path.join(args.inputsDir, `input_${i}.pb`);
    if (!fs.existsSync(file)) throw new Error(`missing ${file} for graph input ${i} '${name}'`);
    feeds[name] = toOrtTensor(ort, decodeTensor(file), file);
  });

  // Reset the high-water mark so that VmHWM afterwards is the peak of the runs.
  const hwmLoad = procStatus("VmHWM"); // peak of loading (session creation)
  let hwmReset = true;
  try {
    fs.writeFileSync("/proc/self/clear_refs", "5");
  } catch {
    hwmReset = false;
  }
  const rssBefore = procStatus("VmRSS");
  let t0 = process.hrtime.bigint();
  let results = await session.run(feeds);
  const firstRun = Number(process.hrtime.bigint() - t0) / 1e9;
  const hwmFirst = procStatus("VmHWM"); // peak of the first run alone
  for (let i = 0; i < args.warmup; ++i) results = await session.run(feeds);
  const latencies = [];
  for (let i = 0; i < args.iterations; ++i) {
    t0 = process.hrtime.bigint();
    results = await session.run(feeds);
    latencies.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  const hwm = procStatus("VmHWM");

  const outputs = [];
  session.outputNames.forEach((name, i) => {
    const t = results[name];
    outputs.push({ name, type: t.type, dims: Array.from(t.dims, Number) });
    if (args.outputDir) {
      fs.mkdirSync(args.outputDir, { recursive: true });
      fs.writeFileSync(path.join(args.outputDir, `output_${i}.pb`), encodeTensor(name, t));
    }
  });
  const sorted = [...latencies].sort((a, b) => a - b);
  const median = sorted.length
    ? (sorted.length % 2 ? sorted[(sorted.length - 1) / 2]
                         : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2)
    : firstRun;
  process.stdout.write(JSON.stringify({
    ort_version: ort.env.versions.common, threads: args.threads, outputs,
    first_run_s: firstRun, latencies_s: latencies, median_s: median,
    rss_before_bytes: rssBefore, rss_growth_bytes: hwm - rssBefore, hwm_reset: hwmReset,
    rss_start_bytes: rssStart, process_peak_growth_bytes: Math.max(hwmLoad, hwm) - rssStart,
    rss_growth_first_run_bytes: hwmFirst - rssBefore,
    process_peak_growth_first_run_bytes: Math.max(hwmLoad, hwmFirst) - rssStart,
  }) + "\n");
}

main().catch((e) => {
  console.error(`run_onnxruntime.mjs: error: ${e.message}`);
  process.exit(1);
});
