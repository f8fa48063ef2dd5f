// Runs one model with ONNX Runtime (onnxruntime-node) for scripts/gen-opset-tests.py.
//
//   node gen-opset-tests-ort.cjs ORT_DIR MODEL IN.json OUT.json
//
// IN.json: {name: {type, dims, data}}, data being the tensor's little-endian bytes in base64
// (for type 'string', a list of the strings); OUT.json gets the outputs in the same form.
const [ortDir, model, inPath, outPath] = process.argv.slice(2);
const fs = require('node:fs');
const path = require('node:path');
const ort = require(path.resolve(ortDir, 'node_modules/onnxruntime-node'));

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array,
  uint64: BigUint64Array, bool: Uint8Array,
};

function toTensor({ type, dims, data }) {
  if (type === 'string') return new ort.Tensor('string', data, dims);
  const bytes = Buffer.from(data, 'base64');
  const Ctor = ARRAYS[type];
  const values = new Ctor(bytes.length / Ctor.BYTES_PER_ELEMENT);
  new Uint8Array(values.buffer).set(bytes);
  return new ort.Tensor(type, values, dims);
}

function toJson(t) {
  if (t.type === 'string') return { type: t.type, dims: Array.from(t.dims), data: Array.from(t.data) };
  const data = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength).toString('base64');
  return { type: t.type, dims: Array.from(t.dims), data };
}

(async () => {
  const session = await ort.InferenceSession.create(model, { executionProviders: ['cpu'], graphOptimizationLevel: 'disabled' });
  const feeds = {};
  for (const [name, t] of Object.entries(JSON.parse(fs.readFileSync(inPath, 'utf8')))) feeds[name] = toTensor(t);
  const results = await session.run(feeds);
  const out = {};
  for (const name of session.outputNames) {
    out[name] = toJson(results[name]);
  }
  fs.writeFileSync(outPath, JSON.stringify(out));
})().catch((e) => {
  process.stderr.write(`ort: ${e.message}\n`);
  process.exit(1);
});
