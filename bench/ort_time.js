// ort_time.js MODEL THREADS REPEAT: onnxruntime-node's per-inference wall
// time of MODEL on random float inputs in [-1, 1) and integer inputs in
// [0, 7] (as `opmig run` fills them; symbolic dims 1), with
// THREADS intra-op threads, one inter-op thread, sequential execution:
// one warm-up run, then REPEAT timed runs; prints
// "ort: N runs, min X ms, median Y ms, mean Z ms" like `opmig run --time`,
// then "ort cpu: ..." the same of the process's CPU time per run (user and
// system, all its threads: onnxruntime's spinning pool threads count).
'use strict';
const path = require('path');
const ort = require(process.env.OPMIG_ORT_DIR ||
	path.join(__dirname, '..', '.cache', 'npm', 'node_modules', 'onnxruntime-node'));

async function main() {
	const [model, threads, repeat] = process.argv.slice(2);
	const n = parseInt(repeat || '5', 10);
	const s = await ort.InferenceSession.create(model, {
		intraOpNumThreads: parseInt(threads || '1', 10),
		interOpNumThreads: 1,
		executionMode: 'sequential',
		graphOptimizationLevel: 'all',
	});
	const feeds = {};
	let seed = 12345;
	const rnd = () => {
		seed = (seed * 1103515245 + 12345) % 2147483648;
		return seed / 1073741824 - 1;
	};
	for (const name of s.inputNames) {
		const meta = s.inputMetadata ? s.inputMetadata.find((m) => m.name === name) : null;
		const dims = meta && meta.shape ? meta.shape.map((d) => (typeof d === 'number' ? d : 1)) : null;
		if (!dims)
			throw new Error(`input '${name}': shape unknown`);
		const count = dims.reduce((a, b) => a * b, 1);
		const type = meta && meta.type ? meta.type : 'float32';
		if (type === 'int64' || type === 'int32') {
			// token ids and the like: valid rows of any table of 8 or more
			const data = type === 'int64' ? new BigInt64Array(count) : new Int32Array(count);
			for (let i = 0; i < count; i++) {
				const v = Math.floor((rnd() + 1) * 4);
				data[i] = type === 'int64' ? BigInt(v) : v;
			}
			feeds[name] = new ort.Tensor(type, data, dims);
			continue;
		}
		const data = new Float32Array(count);
		for (let i = 0; i < count; i++)
			data[i] = rnd();
		feeds[name] = new ort.Tensor('float32', data, dims);
	}
	await s.run(feeds);
	const t = [], c = [];
	for (let i = 0; i < n; i++) {
		const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
		await s.run(feeds);
		const dc = process.cpuUsage(c0);
		t.push(Number(process.hrtime.bigint() - t0) / 1e6);
		c.push((dc.user + dc.system) / 1e3);
	}
	const line = (what, v) => {
		const sorted = [...v].sort((a, b) => a - b);
		const med = n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
		const mean = v.reduce((a, b) => a + b, 0) / n;
		console.log(`${what}: ${n} runs, min ${sorted[0].toFixed(3)} ms, median ${med.toFixed(3)} ms, mean ${mean.toFixed(3)} ms`);
	};
	line('ort', t);
	line('ort cpu', c);
}

main().catch((e) => {
	console.error(`ort_time.js: ${e.message}`);
	process.exit(2);
});
