#!/usr/bin/env node
// onnxruntime-node.js MODEL INPUTS OUTDIR: an opmig runtime adapter
// (opmig-probe(1), `opmig migrate --verify-with`): run MODEL in
// onnxruntime-node on INPUTS/input_K.npy (bound to the names in
// INPUTS/inputs.txt, else to the session's inputs in order) and write
// OUTDIR/output_K.npy in the order of INPUTS/outputs.txt (else the
// session's).  A model onnxruntime refuses to load or run exits 1 with its
// message on one line.  onnxruntime-node is found at $OPMIG_ORT_DIR, on
// node's module path, or in the source tree's .cache/npm.
'use strict';
const fs = require('fs');
const path = require('path');

function findOrt() {
	const tries = [];
	if (process.env.OPMIG_ORT_DIR) tries.push(process.env.OPMIG_ORT_DIR);
	tries.push('onnxruntime-node');
	tries.push(path.join(__dirname, '..', '.cache', 'npm', 'node_modules', 'onnxruntime-node'));
	for (const t of tries) {
		try {
			return { ort: require(t), dir: t };
		} catch (e) { /* next */ }
	}
	throw new Error('onnxruntime-node not found (set OPMIG_ORT_DIR)');
}

const TYPES = {
	'<f4': ['float32', Float32Array, 4], '<f2': ['float16', Uint16Array, 2],
	'<f8': ['float64', Float64Array, 8], '|i1': ['int8', Int8Array, 1],
	'|u1': ['uint8', Uint8Array, 1], '<i2': ['int16', Int16Array, 2],
	'<u2': ['uint16', Uint16Array, 2], '<i4': ['int32', Int32Array, 4],
	'<u4': ['uint32', Uint32Array, 4], '<i8': ['int64', BigInt64Array, 8],
	'<u8': ['uint64', BigUint64Array, 8], '|b1': ['bool', Uint8Array, 1],
};

function readNpy(file, ort) {
	const buf = fs.readFileSync(file);
	if (buf.readUInt32BE(0) !== 0x934e554d) throw new Error(file + ': not a .npy file');
	const major = buf[6];
	const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
	const start = major === 1 ? 10 : 12;
	const head = buf.toString('latin1', start, start + hlen);
	const descr = /'descr':\s*'([^']*)'/.exec(head)[1];
	if (/'fortran_order':\s*True/.test(head)) throw new Error(file + ': Fortran order');
	const shape = /'shape':\s*\(([^)]*)\)/.exec(head)[1].split(',')
		.map((s) => s.trim()).filter((s) => s.length).map(Number);
	const n = shape.reduce((a, b) => a * b, 1);
	const data = buf.subarray(start + hlen);
	const u = /^<U(\d+)$/.exec(descr);
	if (u) {      // fixed-width UTF-32 strings
		const w = Number(u[1]), out = [];
		for (let i = 0; i < n; i++) {
			let s = '';
			for (let j = 0; j < w; j++) {
				const cp = data.readUInt32LE(4 * (i * w + j));
				if (!cp) break;
				s += String.fromCodePoint(cp);
			}
			out.push(s);
		}
		return new ort.Tensor('string', out, shape);
	}
	const t = TYPES[descr];
	if (!t) throw new Error(file + ': dtype ' + descr + ' not supported');
	const ab = new ArrayBuffer(n * t[2]);
	new Uint8Array(ab).set(data.subarray(0, n * t[2]));
	return new ort.Tensor(t[0], new t[1](ab), shape);
}

function writeNpy(file, tensor) {
	let descr, body;
	if (tensor.type === 'string') {
		const strs = tensor.data.map((x) => Array.from(x));
		const w = Math.max(1, ...strs.map((x) => x.length));
		body = Buffer.alloc(4 * w * strs.length);
		strs.forEach((cps, i) => cps.forEach((c, j) => body.writeUInt32LE(c.codePointAt(0), 4 * (i * w + j))));
		descr = '<U' + w;
	} else {
		const entry = Object.entries(TYPES).find(([, v]) => v[0] === tensor.type);
		if (!entry) throw new Error('output type ' + tensor.type + ' not supported');
		const d = tensor.data;
		descr = entry[0];
		body = Buffer.from(d.buffer, d.byteOffset, d.byteLength);
	}
	const dims = tensor.dims.map(Number);
	const shape = dims.length === 1 ? '(' + dims[0] + ',)' : '(' + dims.join(', ') + ')';
	let head = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ', }';
	const pad = 64 - ((10 + head.length + 1) % 64);
	head += ' '.repeat(pad % 64) + '\n';
	const pre = Buffer.alloc(10);
	pre.writeUInt32BE(0x934e554d, 0);
	pre[4] = 0x50; pre[5] = 0x59; pre[6] = 1; pre[7] = 0;
	pre.writeUInt16LE(head.length, 8);
	fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(head, 'latin1'), body]));
}

function names(file) {
	try {
		return fs.readFileSync(file, 'utf8').split('\n').filter((s) => s.length);
	} catch (e) {
		return null;
	}
}

async function main() {
	const [model, inputs, outdir] = process.argv.slice(2);
	if (!model || !inputs || !outdir) throw new Error('usage: onnxruntime-node.js MODEL INPUTS OUTDIR');
	const { ort, dir } = findOrt();
	let version = '?';
	try {
		version = require(path.join(path.dirname(require.resolve(dir)), '..', 'package.json')).version;
	} catch (e) { /* unknown */ }
	process.stderr.write('opmig-runtime: onnxruntime-node ' + version + '\n');
	const s = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1,
		logSeverityLevel: 3 });
	const ins = names(path.join(inputs, 'inputs.txt')) || s.inputNames;
	const outs = names(path.join(inputs, 'outputs.txt')) || s.outputNames;
	const feeds = {};
	ins.forEach((n, k) => { feeds[n] = readNpy(path.join(inputs, 'input_' + k + '.npy'), ort); });
	const r = await s.run(feeds);
	fs.mkdirSync(outdir, { recursive: true });
	outs.forEach((n, k) => writeNpy(path.join(outdir, 'output_' + k + '.npy'), r[n]));
}

main().catch((e) => {
	const msg = String(e && e.message ? e.message : e).replace(/\s+/g, ' ').trim();
	process.stderr.write('onnxruntime: ' + msg + '\n');
	process.exit(1);
});
