// Times ONNX Runtime (onnxruntime-node, CPU EP) on one model for scripts/bench-vs-ort.sh.
//
//   node --expose-gc ort_runner.mjs --ort-dir DIR --model FILE --threads N --warmup N --runs N \
//        [--input NAME=FILE.npy ...]
//
// DIR is the npm prefix holding node_modules/onnxruntime-node. Prints one JSON object: the
// per-run latencies, session creation, first inference, the process's peak RSS, and the peak RSS
// of Node.js with onnxruntime loaded before any session exists (what Node itself costs).
//
// The binding hands every output to JavaScript in a new buffer, which only a garbage collection
// frees. Until one ran, every run took fresh memory and faulted its pages in, and the timings
// counted that: 0.7 ms a run for a 256 KiB output on a 2-core VM, more than the Attention op that
// wrote it took (0.24 ms in ORT's own profile). A minor collection after every run, not timed,
// frees each run's outputs before the next.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

function die(message) {
  process.stderr.write(`ort_runner: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const args = { inputs: [], warmup: 5, runs: 20, threads: 1 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) die(`${flag} needs a value`);
    if (flag === '--ort-dir') args.ortDir = value;
    else if (flag === '--model') args.model = value;
    else if (flag === '--threads') args.threads = Number(value);
    else if (flag === '--warmup') args.warmup = Number(value);
    else if (flag === '--runs') args.runs = Number(value);
    else if (flag === '--input') args.inputs.push(value);
    else die(`unknown option ${flag}`);
  }
  if (!args.ortDir || !args.model) die('--ort-dir and --model are required');
  for (const k of ['threads', 'warmup', 'runs'])
    if (!Number.isInteger(args[k]) || args[k] < (k === 'runs' ? 1 : 0)) die(`--${k} must be a whole number`);
  return args;
}

// .npy descr -> [ORT tensor type, typed array constructor]. Little-endian only, as np.save writes.
const NPY_TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<f2': ['float16', Uint16Array],
  '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array], '|b1': ['bool', Uint8Array],
  '<i2': ['int16', Int16Array], '<u2': ['uint16', Uint16Array], '<i4': ['int32', Int32Array],
  '<u4': ['uint32', Uint32Array], '<i8': ['int64', BigInt64Array], '<u8': ['uint64', BigUint64Array],
};

// Reads a NumPy .npy file (format 1.0 to 3.0, C order) into [type, data, dims].
function readNpy(path) {
  const buf = readFileSync(path);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') die(`${path} is not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLen;
  const header = buf.toString(major === 3 ? 'utf8' : 'latin1', major === 1 ? 10 : 12, start);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || !fortran || shape === undefined) die(`${path}: cannot parse the .npy header ${header.trim()}`);
  if (fortran === 'True') die(`${path}: Fortran-order arrays are not supported; save a C-order array`);
  const type = NPY_TYPES[descr];
  if (!type) die(`${path}: dtype ${descr} is not supported (supported: ${Object.keys(NPY_TYPES).join(' ')})`);
  const dims = shape.split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const [ortType, Ctor] = type;
  if (buf.length - start < count * Ctor.BYTES_PER_ELEMENT) die(`${path}: truncated data`);
  // Copy into a fresh, aligned buffer: the file's data offset need not be a multiple of the element size.
  const data = new Ctor(count);
  new Uint8Array(data.buffer).set(buf.subarray(start, start + count * Ctor.BYTES_PER_ELEMENT));
  return [ortType, ortType === 'bool' ? new Uint8Array(data.buffer) : data, dims];
}

const mib = (kib) => kib / 1024;  // process.resourceUsage().maxRSS is in KiB
const now = () => process.hrtime.bigint();
const ms = (a, b) => Number(b - a) / 1e6;

const args = parseArgs(process.argv.slice(2));
if (!globalThis.gc) die('run node with --expose-gc (each run\'s outputs are collected before the next)');
const collectOutputs = () => globalThis.gc({ type: 'minor' });
const require = createRequire(resolve(args.ortDir, 'package.json'));
const ort = require('onnxruntime-node');
const version = require('onnxruntime-node/package.json').version;
const baselineRss = mib(process.resourceUsage().maxRSS);

const feeds = {};
for (const spec of args.inputs) {
  const eq = spec.indexOf('=');
  if (eq <= 0) die(`--input ${spec} is not NAME=FILE.npy`);
  const [type, data, dims] = readNpy(spec.slice(eq + 1));
  feeds[spec.slice(0, eq)] = new ort.Tensor(type, data, dims);
}

const t0 = now();
const session = await ort.InferenceSession.create(args.model, {
  executionProviders: ['cpu'],
  intraOpNumThreads: args.threads,
  interOpNumThreads: 1,
  graphOptimizationLevel: 'all',
  executionMode: 'sequential',
});
const t1 = now();
const missing = session.inputNames.filter((n) => !(n in feeds));
if (missing.length) die(`no --input for ${missing.join(', ')}; the inputs are ${session.inputNames.join(', ')}`);
await session.run(feeds);
const t2 = now();
for (let i = 0; i < args.warmup; ++i) {
  await session.run(feeds);
  collectOutputs();
}
const samples = [];
for (let i = 0; i < args.runs; ++i) {
  const a = now();
  await session.run(feeds);
  samples.push(ms(a, now()));
  collectOutputs();
}
process.stdout.write(JSON.stringify({
  engine: 'onnxruntime-node',
  version,
  threads: args.threads,
  runs: args.runs,
  warmup: args.warmup,
  session_create_ms: ms(t0, t1),
  first_inference_ms: ms(t1, t2),
  samples_ms: samples,
  peak_rss_mib: mib(process.resourceUsage().maxRSS),
  node_baseline_rss_mib: baselineRss,
}) + '\n');
