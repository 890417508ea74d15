// ort_run.js MODEL SPEC OUT: run MODEL in onnxruntime-node (one thread,
// no graph optimization) on the inputs SPEC lists (JSON: name, type, dims,
// file of raw little-endian data) and write every output to OUT as JSON
// {name: {dims, data}}.  Used by ort_diff.py.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(process.env.OPMIG_ORT_DIR ||
	path.join(__dirname, '..', '.cache', 'npm', 'node_modules', 'onnxruntime-node'));
async function main() {
	const [model, spec, out] = process.argv.slice(2);
	const s = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, graphOptimizationLevel: 'disabled' });
	const inputs = JSON.parse(fs.readFileSync(spec));
	const feeds = {};
	const T = { float32: Float32Array, int8: Int8Array, uint8: Uint8Array, int64: BigInt64Array, int32: Int32Array, float64: Float64Array };
	for (const i of inputs) {
		const buf = fs.readFileSync(i.file);
		const arr = new T[i.type](buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length));
		feeds[i.name] = new ort.Tensor(i.type, arr, i.dims);
	}
	const r = await s.run(feeds);
	const res = {};
	for (const k of s.outputNames) res[k] = { dims: r[k].dims, data: Array.from(r[k].data, Number) };
	fs.writeFileSync(out, JSON.stringify(res));
}
main().catch((e) => { console.error(e.message); process.exit(2); });
