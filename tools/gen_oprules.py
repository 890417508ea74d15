#!/usr/bin/python3
# gen_oprules.py [OPSUPPORT_DIR]: rebuild oprules/*.json from the sourced
# research in ../shared/opsupport (facts and their sources; see its README).
# Hand-checked constraints the research names are in the tables below.
# Run from the repository root; review the diff before committing.
import sys
import json, collections
OS=(sys.argv[1].rstrip('/') + '/') if len(sys.argv) > 1 else '../shared/opsupport/'
SRC={
 'tensorrt':'github.com/onnx/onnx-tensorrt docs/operators.md (copy stating "TensorRT 10.15 supports opset 9 to 24"; op names cross-checked against the 10.1-GA branch)',
 'ascend':'Ascend msit analyze map_conf/onnx.yaml (GitHub mirror xiaobingling93-pixel/Ascend-msit) and hiascend.com CANN "Supported ONNX operators" pages (8.0.0/8.5.0/9.0.0)',
 'rknpu2':'github.com/airockchip/rknn-toolkit2 @59a913d doc/RKNNToolKit2_OP_Support-2.3.2.md and doc/05_RKNN_Compiler_Support_Operator_List_V2.3.2.pdf (RK3588)',
 'qnn':'github.com/onnxruntime/onnxruntime-qnn docs/execution_providers/QNN-ExecutionProvider.md (QNN EP v2.5.0)',
 'coreml':'github.com/microsoft/onnxruntime tools/ci_build/github/apple/coreml_supported_mlprogram_ops.md and coreml_supported_ops.md',
 'nnapi':'github.com/microsoft/onnxruntime tools/ci_build/github/android/nnapi_supported_ops.md',
 'openvino':'github.com/openvinotoolkit/openvino src/frontends/onnx/docs/supported_ops.md (import level)',
}
NOTREG={'ImageScaler','ScaledTanh','ParametricSoftplus'}
def dump(path, d):
    with open(path,'w') as f:
        json.dump(d, f, indent=1, ensure_ascii=False); f.write('\n')

# ---- tensorrt -------------------------------------------------------------
trt=json.load(open(OS+'tensorrt.json'))
K=collections.OrderedDict
extra={
 'AveragePool':{'inputs':{'0':{'rank':[4,5]}},'attrs':{'dilations':{'min':1,'max':1}}},
 'MaxPool':{'inputs':{'0':{'rank':[4,5]}},'attrs':{'dilations':{'min':1,'max':1}}},
 'LpPool':{'attrs':{'dilations':{'min':1,'max':1}}},
 'CumSum':{'inputs':{'1':{'const':True}}},
 'TopK':{'attrs':{'sorted':{'equals':1}}},
 'ScatterND':{'attrs':{'reduction':{'allowed':['none']}}},
 'Resize':{'attrs':{'mode':{'allowed':['nearest','linear']},
   'coordinate_transformation_mode':{'allowed':['half_pixel','pytorch_half_pixel','tf_half_pixel_for_nn','asymmetric','align_corners']},
   'nearest_mode':{'allowed':['floor','ceil','round_prefer_floor','round_prefer_ceil']},
   'keep_aspect_ratio_policy':{'allowed':['stretch']},
   'antialias':{'equals':0}}},
 'GridSample':{'inputs':{'0':{'rank':[4,4]}}},
 'Attention':{'inputs':{'0':{'rank':[4,4]},'1':{'rank':[4,4]},'2':{'rank':[4,4]},'3':{'rank':[4,4]}}},
 'EyeLike':{'static_shape':True},
 'OneHot':{'inputs':{'1':{'const':True}}},
 'Dropout':{'inputs':{'2':{'const':True}}},
 'Squeeze':{'inputs':{'1':{'const':True}}},
 'Unsqueeze':{'inputs':{'1':{'const':True}}},
 'STFT':{'inputs':{'1':{'const':True},'2':{'const':True}}},
 'LSTM':{'attrs':{'input_forget':{'equals':0},'layout':{'equals':0}}},
 'TensorScatter':{'inputs':{'0':{'rank':[4,4]},'1':{'rank':[4,4]}},'attrs':{'axis':{'equals':-2}}},
 'RotaryEmbedding':{'inputs':{'3':{'dtypes':['int64']}}},
 'DeformConv':{'inputs':{'0':{'rank':[3,4]}}},
}
for r in ['ReduceL1','ReduceL2','ReduceLogSum','ReduceLogSumExp','ReduceMax','ReduceMean','ReduceMin','ReduceProd','ReduceSum','ReduceSumSquare']:
    extra[r]={'inputs':{'1':{'const':True}}}
ops=K()
for name in sorted(trt['ops']):
    if name in NOTREG: continue
    e=trt['ops'][name]; o=K()
    if e['types']: o['dtypes']=e['types']
    o.update(extra.get(name,{}))
    if e['notes']: o['notes']=e['notes']
    ops[name]=o
for name in sorted(trt['unsupported_known']):
    ops[name]={'supported':False,'notes':'listed as not supported by the parser table'}
ops=K(sorted(ops.items()))
t=K()
t['schema']=1; t['id']='tensorrt'; t['name']='TensorRT 10.x ONNX parser'; t['vendor']='NVIDIA'
t['family']='TensorRT 10 (NVIDIA GPUs, Jetson)'
t['description']='Operators the onnx-tensorrt parser of TensorRT 10.15 imports, with the types and restrictions of its operator table.'
t['notes']=('The opset range 9..24 is the parser\'s global range for the model\'s default-domain opset, not a per-op version range, so no op has "versions". '
 'A supported op does not promise that every attribute combination works. '
 'Per-op dtypes are the types the table lists for the op; int8, int4, float8 and float4 are quantized types reachable only through QuantizeLinear/DequantizeLinear, whose zero point must be 0 (not checkable here: a value constraint). '
 'float64 has limited support (cast down to float32, clamped to +-FLT_MAX); uint8 only as a network input or output type. '
 'int64 is supported natively in TensorRT 10 (8.x cast it to int32). '
 'missing_dtypes lists the ONNX types absent from the table\'s list of supported data types. '
 'ImageScaler, ScaledTanh and ParametricSoftplus are in the table but not in opmig\'s operator registry (experimental ops of old opsets), so they are left out. '
 'Ops added after 10.1 (Attention, RMSNormalization, RotaryEmbedding, TensorScatter, BlackmanWindow, HannWindow, HammingWindow, STFT) were only seen in the 10.15 copy. '
 'Not checked on real hardware.')
t['sources']=[trt['source']]
t['opset']=[9,24]
t['missing_dtypes']=['int16','uint16','uint32','uint64','uint4','string','complex64','complex128']
t['ops']=ops
dump('oprules/tensorrt.json', t)

# ---- generic-npu -----------------------------------------------------------
core="Add AveragePool BatchNormalization Cast Clip Concat Conv DepthToSpace Div Elu Exp Flatten Gather Gemm GlobalAveragePool GlobalMaxPool Identity LRN MatMul Max MaxPool Mul PRelu Pad Pow ReduceMean Relu Reshape Resize Sigmoid Sin Slice Softmax Split Sqrt Squeeze Sub Tanh Transpose Unsqueeze".split()
DT=['float32','float16','int32','int8']
def S(*ts): return [SRC[x] for x in ts]
g={
 'Conv':{'inputs':{'0':{'rank':[4,4]},'1':{'const':True},'2':{'const':True}},
   'notes':'2-D convolution only (NNAPI: only 2-D; CoreML: 1-D/2-D; RKNPU2: 4-D NCHW only). Weights constant (NNAPI, CoreML), bias constant (CoreML). Kernel, stride, pad and dilation limits differ per chip (RKNPU2 kernel <= 31, Ascend kernel <= 255): check the chip\'s own target.',
   'sources':S('nnapi','coreml','rknpu2','ascend')},
 'MaxPool':{'inputs':{'0':{'rank':[4,4]}},'attrs':{'dilations':{'min':1,'max':1},'ceil_mode':{'equals':0},'auto_pad':{'allowed':['NOTSET']},'storage_order':{'equals':0}},
   'notes':'2-D pooling only (CoreML, NNAPI). dilations unsupported (TensorRT; Ascend for 2-D). ceil_mode unsupported and only explicit padding (RKNPU2). storage_order not supported (Ascend) / must be 0 (RKNPU2). The Indices output is not supported (TensorRT): not checked here.',
   'sources':S('coreml','nnapi','tensorrt','ascend','rknpu2')},
 'AveragePool':{'inputs':{'0':{'rank':[4,4]}},'attrs':{'dilations':{'min':1,'max':1},'ceil_mode':{'equals':0},'auto_pad':{'allowed':['NOTSET']},'count_include_pad':{'equals':1}},
   'notes':'2-D pooling only (CoreML, NNAPI). dilations must be absent or 1 (TensorRT). ceil_mode unsupported, auto_pad NOTSET only, count_include_pad must be 1 (RKNPU2 RK3588 spec).',
   'sources':S('coreml','nnapi','tensorrt','rknpu2')},
 'Pad':{'inputs':{'1':{'const':True},'2':{'const':True}},'attrs':{'mode':{'allowed':['constant']}},
   'notes':'Constant mode only (CoreML NeuralNetwork, NNAPI); pads and constant_value constant (CoreML, NNAPI). Ascend supports only constant_value = 0 in constant mode (a value constraint, not checked here).',
   'sources':S('coreml','nnapi','ascend')},
 'Resize':{'inputs':{'0':{'rank':[4,4]},'2':{'const':True},'3':{'const':True}},
   'attrs':{'mode':{'allowed':['nearest','linear']},'coordinate_transformation_mode':{'allowed':['half_pixel','pytorch_half_pixel','align_corners']},'antialias':{'equals':0}},
   'notes':'mode nearest or linear (TensorRT, Ascend, RKNPU2). coordinate_transformation_mode: the values both TensorRT and RKNPU2 list. antialias unsupported (TensorRT, RKNPU2). scales/sizes must be constants (Ascend). Only 2-D resize (NNAPI). RKNPU2 further allows only integer up-scaling by 2..8 on H and W, and QNN HTP runs only some combinations: UNCERTAIN which combinations run everywhere.',
   'sources':S('tensorrt','ascend','rknpu2','nnapi','qnn')},
 'Squeeze':{'inputs':{'1':{'const':True}},'notes':'axes must be constant (TensorRT, NNAPI). On RKNPU2 it runs on the CPU, not the NPU.','sources':S('tensorrt','nnapi','rknpu2')},
 'Unsqueeze':{'inputs':{'1':{'const':True}},'notes':'axes must be constant (TensorRT, NNAPI).','sources':S('tensorrt','nnapi')},
 'Slice':{'inputs':{'1':{'const':True},'2':{'const':True},'3':{'const':True},'4':{'const':True}},
   'notes':'starts, ends, axes and steps must be constant (CoreML). The step on the last axis must be 1 (Ascend); steps all 1 except a channel special case, batch size 1 (RKNPU2): not checked here.',
   'sources':S('coreml','ascend','rknpu2')},
 'Gemm':{'inputs':{'1':{'const':True}},
   'notes':'B must be constant (CoreML MLProgram). The Ascend doc says C, alpha and beta are "not supported yet" while also listing them: UNCERTAIN; a Gemm with C, alpha != 1 or beta != 1 may need a MatMul+Mul+Add rewrite there.',
   'sources':S('coreml','ascend')},
 'ReduceMean':{'inputs':{'1':{'const':True}},'notes':'axes must be constant (TensorRT). RKNPU2 CPU: output rank <= 4.','sources':S('tensorrt','rknpu2')},
 'Gather':{'notes':'Indices must be non-negative (Ascend, QNN): a value constraint, not checked here. RKNPU2 RK3588: indices rank 1 and axis 0..3. NNAPI: indices constant unless int32.','sources':S('ascend','qnn','rknpu2','nnapi')},
 'Softmax':{'notes':'RKNPU2 RK3588: axis only 1 or 3 of the 4-D layout, batch size 1 (not checked here: depends on rank).','sources':S('rknpu2')},
}
ops=K()
for name in sorted(core):
    o=K(); o['dtypes']=DT
    o.update(g.get(name,{}))
    ops[name]=o
t=K()
t['schema']=1; t['id']='generic-npu'; t['name']='Generic NPU (conservative common subset)'; t['vendor']='opmig'
t['family']='any NPU'
t['description']='The default target: the 40 operators all seven researched targets accept (TensorRT, Ascend, RKNPU2, QNN, CoreML, NNAPI, OpenVINO), with the tightest restrictions any of them states, fp32/fp16/int32/int8 only, static shapes, opset 11-17.'
t['notes']=('A conservative policy target made by opmig, not a vendor list: passing it suggests but does not prove that a model runs on a given chip. '
 'The op set is the common core of the research notes; per-op constraints come from the named targets. '
 'The dtype set float32/float16/int32/int8 and the opset range 11..17 are opmig policy (issue 4). int64 and float64 are missing on the NPUs (RKNPU2 uses int64 only for index/shape inputs), so constant int64 shape inputs (Reshape shape, Slice starts) are expected to be folded or narrowed before the scan. '
 'Dynamic shapes are off because the QNN EP and OpenVINO NPU do not support them; max_rank 4 follows RKNPU2, whose NPU ops are specified on 4-D NCHW only. '
 'fp16 is preferred because the NPUs are fp16/int8-centric (RKNPU2 computes in int8/float16; QNN HTP runs fp32 models in fp16). '
 'Not checked on real hardware.')
t['sources']=['opmig operator-support research notes (opsupport/README.md: "Core set accepted everywhere", "Common themes")']+[SRC[k] for k in ['tensorrt','ascend','rknpu2','qnn','coreml','nnapi','openvino']]
t['opset']=[11,17]
t['missing_dtypes']=['int64','float64']
t['dynamic_shapes']=False
t['max_rank']=4
t['preferred_precision']='fp16'
t['ops']=ops
dump('oprules/generic-npu.json', t)

# ---- ORT EP allow-lists: qnn, coreml, nnapi --------------------------------
import subprocess
def in_registry(key):
    dom, _, name = key.rpartition(':')
    args=['/work/main/bin/opmig','ops',name]+(['--domain',dom] if dom else ['--domain','ai.onnx'])
    return subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
def ep(fname, tid, name, vendor, family, desc, extra_notes, cons, top):
    d=json.load(open(OS+fname))
    ops=K(); skipped=[]
    for k in sorted(d['ops']):
        if not in_registry(k): skipped.append(k); continue
        e=d['ops'][k]; o=K()
        if e.get('types'): o['dtypes']=e['types']
        o.update(cons.get(k,{}))
        if e.get('notes'): o['notes']=e['notes']
        ops[k]=o
    for k in sorted(d['unsupported_known']):
        if not in_registry(k): skipped.append(k); continue
        ops[k]={'supported':False,'notes':'stated not supported by the source'}
    t=K()
    t['schema']=1; t['id']=tid; t['name']=name; t['vendor']=vendor; t['family']=family
    t['description']=desc
    notes=extra_notes+' General restrictions from the source: '+' '.join(d.get('general_restrictions',[]))
    if skipped: notes+=' Listed by the source but not in opmig\'s operator registry, so left out: '+', '.join(skipped)+'.'
    notes+=' Not checked on real hardware.'
    t['notes']=notes
    t['sources']=[d['source']]
    t.update(top)
    t['ops']=K(sorted(ops.items()))
    dump('oprules/%s.json'%tid, t)
    print(tid, len(ops), 'skipped', skipped)
ALLOW=('The source is an allow-list: an op it leaves out runs on the ORT CPU EP instead of the accelerator, so opmig treats it as not supported on this target. '
       'The source states no opset ranges and almost no types, so ops carry no versions and few dtypes.')
ep('onnxruntime_qnn.json','qnn','ONNX Runtime QNN EP (Qualcomm HTP)','Qualcomm / Microsoft','Snapdragon HTP (Hexagon NPU)',
   'Operators the ONNX Runtime QNN execution provider (plugin onnxruntime-qnn v2.5.0, QAIRT 2.49.40) places on Qualcomm backends.',
   ALLOW+' The op list is backend-independent (HTP, GPU, CPU); HTP-specific limits are in the notes where the doc gives them. The v2.7.0 release notes add ArrayFeatureExtractor, MaxRoiPool, QLinearConv and Swish, not listed here.',
   {}, {'dynamic_shapes':False})
ep('onnxruntime_coreml.json','coreml','ONNX Runtime CoreML EP','Apple / Microsoft','Apple Neural Engine, GPU, CPU via Core ML',
   'Operators the ONNX Runtime CoreML execution provider supports in the ML Program and NeuralNetwork formats.',
   ALLOW+' Each op\'s notes name the formats it works in; an op listed for one format only is not supported in the other. The lists can lag the source code (op builders).',
   {'Conv':{'inputs':{'0':{'rank':[3,4]}}},'AveragePool':{'inputs':{'0':{'rank':[4,4]}}},'MaxPool':{'inputs':{'0':{'rank':[4,4]}}},
    'Gemm':{'inputs':{'1':{'const':True}}}}, {})
ep('onnxruntime_nnapi.json','nnapi','ONNX Runtime NNAPI EP','Google / Microsoft','Android NNAPI (device driver dependent)',
   'Operators the ONNX Runtime NNAPI execution provider supports; the accelerator that runs them depends on the phone vendor\'s NNAPI driver.',
   ALLOW+' The lists can lag the source code (op builders).',
   {'Conv':{'inputs':{'0':{'rank':[4,4]}}},'AveragePool':{'inputs':{'0':{'rank':[4,4]}}},'MaxPool':{'inputs':{'0':{'rank':[4,4]}}},
    'Resize':{'inputs':{'0':{'rank':[4,4]}}},'Squeeze':{'inputs':{'1':{'const':True}}},'Unsqueeze':{'inputs':{'1':{'const':True}}}}, {})

# ---- openvino (import level) -------------------------------------------------
d=json.load(open(OS+'openvino_onnx_frontend.json'))
ops=K(); skipped=[]
for k in sorted(d['ops']):
    if not in_registry(k): skipped.append(k); continue
    e=d['ops'][k]; o=K()
    if e.get('opsets'): o['versions']=[e['opsets'][0], e['opsets'][1]]
    if e.get('types'): o['dtypes']=e['types']
    if e.get('notes'): o['notes']=e['notes']
    ops[k]=o
for k in sorted(d['unsupported_known']):
    if not in_registry(k): skipped.append(k); continue
    ops[k]={'supported':False,'notes':'listed with an empty "supported version" column by the source'}
t=K()
t['schema']=1; t['id']='openvino'; t['name']='OpenVINO ONNX frontend (import level)'; t['vendor']='Intel'
t['family']='OpenVINO CPU/GPU/NPU plugins'
t['description']='Operators the OpenVINO ONNX frontend imports (default domain). Import-level support for all devices alike, not a statement about NPU execution.'
notes=('versions is [lowest implemented op version, null]: the source names no upper bound; ONNX versions newer than the newest implemented one are presumably handled by it (UNCERTAIN, see the per-op notes). '
 'No per-op NPU list was found, so this target says nothing device-specific; the OpenVINO "Supported Devices" table marks dynamic shapes as not supported on NPU, which is not set here because the frontend serves every device. '
 'General restrictions from the source: '+' '.join(d.get('general_restrictions',[])))
if skipped: notes+=' Listed by the source but not in opmig\'s operator registry, so left out: '+', '.join(skipped)+'.'
notes+=' Not checked on real hardware.'
t['notes']=notes
t['sources']=[d['source']]
t['ops']=K(sorted(ops.items()))
dump('oprules/openvino.json', t)
print('openvino', len(ops), 'skipped', skipped)

# ---- ascend --------------------------------------------------------------------
def since_versions(name):
    r=subprocess.run(['/work/main/bin/opmig','ops',name,'--domain','ai.onnx','--json'],capture_output=True,text=True)
    if r.returncode: return None
    return sorted(o['since_version'] for o in json.loads(r.stdout)['operators'])
d=json.load(open(OS+'ascend.json'))
ops=K(); skipped=[]; omin=99; omax=0
cons={
 'Resize':{'inputs':{'2':{'const':True},'3':{'const':True}},'attrs':{'mode':{'allowed':['nearest','linear']}}},
 'Pad':{'attrs':{'mode':{'allowed':['constant','reflect','edge']}}},
}
for k in sorted(d['ops']):
    sv=since_versions(k)
    if not sv: skipped.append(k); continue
    e=d['ops'][k]; o=K()
    if e.get('opsets'):
        lo,hi=e['opsets']; omin=min(omin,lo); omax=max(omax,hi)
        below=[v for v in sv if v<=lo]
        a=below[-1] if below else sv[0]
        b=[v for v in sv if v<=hi][-1] if [v for v in sv if v<=hi] else None
        if b is None: skipped.append(k); continue
        o['versions']=[a,b]
    if e.get('types'): o['dtypes']=e['types']
    o.update(cons.get(k,{}))
    note=e.get('notes') or ''
    if e.get('opsets'): note=('Parser registers it for model opsets %d..%d. '%tuple(e['opsets']))+note
    o['notes']=note
    ops[k]=o
for k in sorted(d['unsupported_known']):
    if not since_versions(k): skipped.append(k); continue
    ops[k]={'supported':False,'notes':'inferred: a standard op in neither the msit parser map nor the CANN 8.0.0 ONNX op list (not named unsupported by Huawei)'}
t=K()
t['schema']=1; t['id']='ascend'; t['name']='Huawei Ascend CANN ATC ONNX parser'; t['vendor']='Huawei'
t['family']='Atlas inference series (Ascend 310P)'
t['description']='Operators the CANN ATC converter accepts from ONNX models, with the per-op limits of the 13 ops whose spec pages were read.'
t['notes']=('Op versions are derived from the model opset ranges under which the ATC parser registers each op (msit map), converted to the op versions those opsets resolve to. '
 'Trust: medium-high for "is the op accepted", low-medium for limits; only Conv, Resize, MatMul, Gather, GatherElements, Slice, Pad, Softmax, LayerNormalization, TopK, MaxPool, Gemm and Softplus have types and documented limits (in their notes; Resize and Pad also as constraints), other ops have no dtypes (not looked up, not "all types"). '
 'The per-op pages contradict themselves in places (Conv "group must be 1"; Gemm "C/alpha/beta not supported yet"): see the notes. '
 'Ops marked not supported are inferred (absent from both sources). The %d Huawei/custom op types of the parser map are not standard ONNX and are left out. '
 'Left out because opmig\'s registry lacks them: %s. Col2Im (the map spells it Col2im) and SequenceAt/SequenceConstruct (two map keys glued together) keep the research notes\' warnings in their notes. '
 'The target opset range 8..18 is the range the research notes give for the parser map; HardSigmoid, LpNormalization, MaxRoiPool and ReduceSumSquare are registered from opset 1. '
 'General restrictions from the source: %s Not checked on real hardware.')%(len(d.get('custom_ops_in_parser',{})), ', '.join(skipped), ' '.join(d['general_restrictions']))
t['sources']=[d['source']]
t['opset']=[8,omax]
t['max_rank']=8
t['ops']=K(sorted(ops.items()))
dump('oprules/ascend.json', t)
print('ascend', len(ops), 'skipped', skipped, omin, omax)

# ---- rknpu2 (RK3588) -----------------------------------------------------------
d=json.load(open(OS+'rknpu2.json'))
pool={'kernel_shape':{'min':1,'max':7},'strides':{'min':1,'max':8},'pads':{'min':0,'max':7},
      'auto_pad':{'allowed':['NOTSET']},'ceil_mode':{'equals':0}}
cons={
 'Conv':{'inputs':{'0':{'rank':[4,4]}},'attrs':{'kernel_shape':{'min':1,'max':31},'strides':{'min':1,'max':7},'pads':{'min':0,'max':15},'dilations':{'min':1,'max':32}}},
 'MaxPool':{'attrs':dict(pool,storage_order={'equals':0})},
 'AveragePool':{'attrs':dict(pool,count_include_pad={'equals':1})},
 'Pad':{'attrs':{'mode':{'allowed':['constant','reflect']}}},
 'Resize':{'attrs':{'mode':{'allowed':['nearest','linear']},'coordinate_transformation_mode':{'allowed':['half_pixel','pytorch_half_pixel','align_corners']},'antialias':{'equals':0}}},
 'Gather':{'inputs':{'1':{'rank':[1,1]}},'attrs':{'axis':{'min':0,'max':3}}},
 'Concat':{'attrs':{'axis':{'min':0,'max':3}}},
 'Split':{'attrs':{'axis':{'min':0,'max':3}}},
 'LSTM':{'attrs':{'input_forget':{'equals':0}}},
}
ops=K(); skipped=[]
for k in sorted(d['ops']):
    if not in_registry(k): skipped.append(k); continue
    e=d['ops'][k]; o=K()
    if e.get('types'): o['dtypes']=e['types']
    o.update(cons.get(k,{}))
    if e.get('notes'): o['notes']=e['notes']
    ops[k]=o
for k in sorted(d['unsupported_known']):
    if not in_registry(k): skipped.append(k); continue
    note='stated "Not Supported" by the toolkit\'s ONNX table'
    if k in d.get('conflicts',{}): note+='; CONFLICT: '+d['conflicts'][k]
    ops[k]={'supported':False,'notes':note}
fuse=[x for x in ['Relu','Clip','PRelu','LeakyRelu','Add','Sigmoid','Tanh','Softplus','HardSigmoid','HardSwish','Elu','Swish','Mish'] if in_registry(x)]
t=K()
t['schema']=1; t['id']='rknpu2'; t['name']='Rockchip RKNPU2 (RK3588)'; t['vendor']='Rockchip'
t['family']='RK3588 (RKNN-Toolkit2 2.3.2)'
t['description']='Operators RKNN-Toolkit2 2.3.2 accepts from ONNX, with the RK3588 NPU limits of the compiler operator list.'
t['notes']=('Per-op types and limits are the RK3588 hardware limits; other chips of the family differ (RK3566/RK3568 have no NPU Softmax; RV1103/RV1106 have few CPU ops; RK2118 has no CPU ops). '
 'The PDF names internal NPU ops (Convolution, exMatMul, exNorm, ...); their mapping to ONNX ops is the research notes\' own. '
 'Ops whose notes say "listed among CPU-executed ops" run on the ARM CPU, not the NPU. '
 'The toolkit table corresponds to ONNX opset 19; no lower bound is stated, so no opset range is set. '
 'NPU compute is int8/float16 only; int64 appears only in shape, repeats and pads inputs, so missing_dtypes is not set (it would flag those inputs). '
 'Conv dilations allow up to 32 (depthwise; 31 otherwise) and the depthwise kernel limit [1,8] is not expressible: see the notes. '
 'The fused patterns are Conv followed by one activation or Add, as the RK3588 spec states'+('' if 'Swish' in fuse else ' (Swish is not in opmig\'s registry and is left out)')+'. '
 'General restrictions from the source: '+' '.join(d['general_restrictions'])
 +(' Left out because opmig\'s registry lacks them: '+', '.join(skipped)+'.' if skipped else '')+' Not checked on real hardware.')
t['sources']=[d['source']]
t['preferred_layout']='nchw'
t['fused_ops']=[K([('name','Conv+'+x),('ops',['Conv',x])]) for x in fuse]
t['ops']=K(sorted(ops.items()))
dump('oprules/rknpu2.json', t)
print('rknpu2', len(ops), 'skipped', skipped, fuse)
