// ort_batch.js JOBS: run many models in one onnxruntime-node process.
// JOBS is a JSON file: [{model, inputs: [{name, type, dims, file}], outdir}],
// each input's data raw little-endian in file (bool as one byte).  For each
// job, outdir/result.json gets {ok, error, outputs: [{name, type, dims,
// file}]} with each output's raw data in outdir/out_K.bin; a model that
// onnxruntime refuses to load or run is ok: false with its message.  One
// thread, graph optimizations off (the reference computes what the graph
// says) unless the job says optimize: true (all of onnxruntime's
// optimizations: QDQ node units fused into its integer kernels).  Where onnxruntime-node lives: $OPMIG_ORT_DIR, or the folder
// tools/npm_deps.sh installs it into (.cache/npm).
'use strict';
const fs = require('fs');
const path = require('path');
const dir = process.env.OPMIG_ORT_DIR ||
	path.join(__dirname, '..', '..', '.cache', 'npm', 'node_modules', 'onnxruntime-node');
const ort = require(dir);
const T = {
	float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
	int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
	int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array, float16: Uint16Array,
};
function load(i) {
	const buf = fs.readFileSync(i.file);
	const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length);
	if (!(i.type in T)) throw new Error('unsupported input type ' + i.type);
	return new ort.Tensor(i.type, new T[i.type](ab), i.dims);
}
function raw(t) {
	const d = t.data;
	if (t.type === 'string') throw new Error('string outputs are not supported');
	return Buffer.from(d.buffer, d.byteOffset, d.byteLength);
}
async function one(job) {
	const res = { ok: false, error: null, outputs: [] };
	try {
		const s = await ort.InferenceSession.create(job.model,
			{ intraOpNumThreads: 1, interOpNumThreads: 1,
			  graphOptimizationLevel: job.optimize ? 'all' : 'disabled', logSeverityLevel: 4 });
		const feeds = {};
		for (const i of job.inputs) feeds[i.name] = load(i);
		const r = await s.run(feeds);
		s.outputNames.forEach((k, n) => {
			const f = path.join(job.outdir, 'out_' + n + '.bin');
			fs.writeFileSync(f, raw(r[k]));
			res.outputs.push({ name: k, type: r[k].type, dims: r[k].dims.map(Number), file: f });
		});
		res.ok = true;
		if (s.release) await s.release();
	} catch (e) {
		res.error = String(e && e.message ? e.message : e).split('\n')[0];
	}
	fs.mkdirSync(job.outdir, { recursive: true });
	fs.writeFileSync(path.join(job.outdir, 'result.json'), JSON.stringify(res));
}
async function main() {
	const jobs = JSON.parse(fs.readFileSync(process.argv[2]));
	for (const j of jobs) {
		fs.mkdirSync(j.outdir, { recursive: true });
		await one(j);
	}
}
main().catch((e) => { console.error('ort_batch: ' + e.message); process.exit(2); });
