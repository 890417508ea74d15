#!/bin/sh
# bench/broad.sh: the kinds of model issue 26 names beside the
# convolutional and float16 ones (bench/gen_broad.py: a tf2onnx-style NHWC
# conv net, LSTM and GRU speech encoders, a Loop/If model of many tiny
# ops, an NHWC MobileNet stack, a batch-4 LSTM+GRU; and, held out, a
# bidirectional GRU+LSTM and an NHWC encoder-decoder; with BROAD_SET=held
# a third held-out set, bench/gen_held.py: a float16 CRNN recognizer, a
# MobileNetV3-Small, a wav2vec2-style speech encoder; with BROAD_SET=held4
# a fourth, bench/gen_held4.py: a YOLOv8-nano-style detector in float32
# and quantized static QDQ by `opmig quantize`, a float16 ViT-Tiny, a
# Conformer speech encoder in float32 and quantized by `opmig quantize
# --dynamic`; with BROAD_SET=held5 a fifth, bench/gen_held5.py: a
# DeepLabV3-style segmenter, a BERT-small encoder in
# float32 and static QDQ, a float16 diffusion-style UNet block, a float16
# EfficientNet-B0; with BROAD_SET=held6 a sixth, bench/gen_held6.py: a
# float16 ConvNeXt-Tiny-style classifier, a
# dilated temporal convolution network for audio, a RetinaNet/FPN-style
# detector in float32 and static QDQ, a Whisper-tiny-style audio encoder
# in float32 and quantized by `opmig quantize --dynamic`; with
# BROAD_SET=held7 a seventh, bench/gen_held7.py:
# a ShuffleNetV2 classifier in float32 and static QDQ, a float16
# DenseNet-style classifier, an HRNet-style pose net, a float16
# GPT-2-style decoder prefill, a Swin-style pair of window-attention
# stages; with BROAD_SET=held8 an eighth, bench/gen_held8.py: a
# MobileViT-XS-style classifier, a float16
# Stable-Diffusion-VAE-decoder-style stack, a FastSpeech2-style
# text-to-mel net in float32 and quantized by `opmig quantize --dynamic`,
# an SSDLite-MobileNetV2-style detector in float32 and static QDQ;
# with BROAD_SET=held9 a ninth, bench/gen_held9.py: a RegNetY-style
# classifier of grouped convolutions and Squeeze-Excitation in float32
# and static QDQ, a T5-small-style text encoder and a Llama-style
# decoder prefill, each in float32 and quantized by `opmig quantize
# --dynamic`, a float16 ESRGAN/RRDB-style super-resolution net, a
# CycleGAN-ResNet-generator-style image-to-image net, an R(2+1)D-style
# 3-D convolution video classifier; with BROAD_SET=held10 a tenth,
# bench/gen_held10.py: a PointNet point-cloud classifier, a 3-D U-Net
# for medical volumes in float32 and static QDQ, a float16 DETR-style
# detector, a Mamba-2-style state-space language model in float32 and
# quantized by `opmig quantize --dynamic`, an ESPCN-style
# super-resolution net at 360x640, a DBNet-style text detector on a
# MobileNetV3-Small-style backbone; with BROAD_SET=held11 an eleventh,
# bench/gen_held11.py: a HiFi-GAN-style vocoder, a float16
# SegFormer-B0-style segmenter, a DLRM-style recommender, an
# SE-ResNeXt-style classifier of grouped convolutions in float32 and
# static QDQ, a Demucs-style waveform source separator with a
# bidirectional LSTM in float32 and quantized by `opmig quantize
# --dynamic`, a NeRF-style MLP with sine/cosine positional encoding;
# with BROAD_SET=held12 a twelfth, bench/gen_held12.py: a float16
# Inception-v3 classifier, an ALBERT-style encoder written with Einsum,
# a GraphSAGE-style graph network of Gather and ScatterElements in
# float32 and quantized by `opmig quantize --dynamic`, a TabNet tabular
# model with sparsemax, a stacked-hourglass pose net in float32 and
# static QDQ, a StyleGAN2-style generator of modulated convolutions
# with run-time weights, a YOLOX-style post-process with
# NonMaxSuppression; with BROAD_SET=held13 a thirteenth,
# bench/gen_held13.py: an RT-DETR-style detection transformer with
# deformable attention by GridSample, a float16 BiSeNetV2 segmenter, a
# float16 RTMPose-style pose net, a tf2onnx-style NHWC MoveNet-style
# pose net with its decoding, a PointPillars-style LiDAR detector of a
# ScatterND canvas in float32 and static QDQ, a Conv-TasNet speech
# separator in float32 and quantized by `opmig quantize --dynamic`, a
# RAFT-small-style optical-flow net; with BROAD_SET=held14 a
# fourteenth, bench/gen_held14.py: a float16 NAFNet restoration net, a
# float16 EfficientViT-style classifier of ReLU linear attention, a
# Depth-Anything/DPT-style depth net, a BigVGAN-style vocoder of
# anti-aliased Snake activations, an MLP-Mixer in float32 and quantized
# by `opmig quantize --dynamic`, a SuperPoint keypoint net in float32
# and static QDQ, a PP-OCR-style SVTR recognizer on an LCNet backbone,
# an RWKV-style language model whose recurrence is a Scan; with
# BROAD_SET=held15 a fifteenth, bench/gen_held15.py: a YOLOv8-seg-style
# segmenter with DFL and mask prototypes in float32 and static QDQ, a
# float16 SAM-style prompt encoder and two-way-transformer mask decoder,
# a LightGlue/SuperGlue-style matcher with unrolled Sinkhorn, a float16
# Stable-Diffusion-style UNet stage with timestep embedding and
# cross-attention, a Tacotron2-style decoder of ten unrolled steps with
# location-sensitive attention, a CRN-style speech enhancer of GRUs and
# a complex mask in float32 and quantized by `opmig quantize --dynamic`,
# a CapsNet with unrolled routing by agreement; with BROAD_SET=held16 a
# sixteenth, bench/gen_held16.py: a float16 ConvNeXt-V2-style classifier
# with global response normalization, a MobileNetV4-style classifier of
# universal inverted bottlenecks in float32 and static QDQ, a
# WaveNet-style vocoder of gated dilated causal convolutions, a
# RIFE-style frame interpolator warping by GridSample, a GPT-2-style
# decoder step with past key and value inputs in float32 and quantized
# by `opmig quantize --dynamic`, a PointNet++-style classifier grouping
# by TopK and Gather, a tf2onnx-style NHWC EfficientDet-style detector
# with BiFPN fusions, a VQGAN-style tokenizer with an ArgMin codebook
# lookup, a U^2-Net-lite segmenter of nested residual U-blocks), against
# onnxruntime-node with
# bench/interp.sh at one thread and at two (interp.sh's alternating
# rounds).  See
# bench/README.md, "A broader suite".
#
# Run from the repository root:  sh bench/broad.sh
#
# Environment: OPMIG, BENCH_DIR, BENCH_PYTHON as bench/interp.sh;
#   BROAD_ROUNDS    interp.sh's rounds (default 3)
#   BROAD_THREADS   thread counts (default "1 2")
#   BROAD_SET       held: bench/gen_held.py's models instead; held4:
#                   bench/gen_held4.py's; held5: bench/gen_held5.py's;
#                   held6: bench/gen_held6.py's; held7:
#                   bench/gen_held7.py's; held8: bench/gen_held8.py's;
#                   held9: bench/gen_held9.py's; held10:
#                   bench/gen_held10.py's; held11:
#                   bench/gen_held11.py's; held12:
#                   bench/gen_held12.py's; held13:
#                   bench/gen_held13.py's; held14:
#                   bench/gen_held14.py's; held15:
#                   bench/gen_held15.py's; held16:
#                   bench/gen_held16.py's
#
# Exit status: 0 done, 2 setup or a command failed.

set -u

here=$(cd "$(dirname "$0")" && pwd) || { echo "broad.sh: cannot find bench/" >&2; exit 2; }
. "$here/lib.sh"
# each set: its generator, the model it writes last (stale check), the
# models measured, and the int8 twins `opmig quantize` writes (TWIN:SRC[:FLAG])
which=${BROAD_SET:-broad} quant=
case $which in
held)	gen=gen_held.py last=w2v.onnx names="crnn_f16 mbv3 w2v" ;;
held4)	gen=gen_held4.py last=conformer.onnx
	names="yolo yolo_qdq vit_f16 conformer conformer_dyn"
	quant="yolo_qdq:yolo conformer_dyn:conformer:--dynamic" ;;
held5)	gen=gen_held5.py last=effnet_f16.onnx
	names="deeplab bert bert_qdq unet_gn_f16 effnet_f16" quant="bert_qdq:bert" ;;
held6)	gen=gen_held6.py last=whisper.onnx
	names="convnext_f16 tcn fpn fpn_qdq whisper whisper_dyn"
	quant="fpn_qdq:fpn whisper_dyn:whisper:--dynamic" ;;
held7)	gen=gen_held7.py last=swin.onnx
	names="shufflenet shufflenet_qdq densenet_f16 hrnet gpt_f16 swin"
	quant="shufflenet_qdq:shufflenet" ;;
held8)	gen=gen_held8.py last=ssdlite.onnx
	names="mobilevit vae_f16 fastspeech tts_dyn ssdlite ssdlite_qdq"
	quant="ssdlite_qdq:ssdlite tts_dyn:fastspeech:--dynamic" ;;
held9)	gen=gen_held9.py last=c3d.onnx
	names="regnet regnet_qdq t5enc t5_dyn esrgan_f16 llama_f32 llama_dyn cyclegan c3d"
	quant="regnet_qdq:regnet t5_dyn:t5enc:--dynamic llama_dyn:llama_f32:--dynamic" ;;
held10)	gen=gen_held10.py last=ocr_det.onnx
	names="pointnet unet3d unet3d_qdq detr_f16 mamba_like mamba_dyn sr_espcn ocr_det"
	quant="unet3d_qdq:unet3d mamba_dyn:mamba_like:--dynamic" ;;
held11)	gen=gen_held11.py last=nerf_mlp.onnx
	names="hifigan segformer_f16 dlrm resnext_se resnext_qdq demucs_like demucs_dyn nerf_mlp"
	quant="resnext_qdq:resnext_se demucs_dyn:demucs_like:--dynamic" ;;
held12)	gen=gen_held12.py last=yolo_post.onnx
	names="inception_f16 einsum_enc gcn gcn_dyn tabnet hourglass hourglass_qdq stylegan yolo_post"
	quant="gcn_dyn:gcn:--dynamic hourglass_qdq:hourglass" ;;
held13)	gen=gen_held13.py last=raft_small.onnx
	names="rtdetr bisenet_f16 rtmpose_f16 movenet pointpillars pointpillars_qdq convtasnet convtasnet_dyn raft_small"
	quant="pointpillars_qdq:pointpillars convtasnet_dyn:convtasnet:--dynamic" ;;
held14)	gen=gen_held14.py last=rwkv.onnx
	names="nafnet_f16 efficientvit_f16 dpt bigvgan mixer mixer_dyn superpoint superpoint_qdq svtr rwkv"
	quant="superpoint_qdq:superpoint mixer_dyn:mixer:--dynamic" ;;
held15)	gen=gen_held15.py last=capsnet.onnx
	names="yoloseg yoloseg_qdq samdec_f16 lightglue ldm_xattn_f16 tacotron crn crn_dyn capsnet"
	quant="yoloseg_qdq:yoloseg crn_dyn:crn:--dynamic" ;;
held16)	gen=gen_held16.py last=u2netp.onnx
	names="convnextv2_f16 mbv4 mbv4_qdq wavenet rife gpt2_kv gpt2_kv_dyn pointnet2 effdet_nhwc vqgan u2netp"
	quant="mbv4_qdq:mbv4 gpt2_kv_dyn:gpt2_kv:--dynamic" ;;
*)	which=broad gen=gen_broad.py last=nhwc_seg.onnx
	names="nhwc lstm gru tiny nhwc_dw lstm_b4 gru_bi nhwc_seg" ;;
esac
suite_setup broad.sh "$which"

if suite_stale "$here/$gen" $last; then
	rm -f "$D"/*_qdq.onnx "$D"/*_dyn.onnx
	"$PY" "$here/$gen" "$D" || suite_die "$gen failed"
	suite_stamp "$here/$gen"
fi
if [ -n "$quant" ]; then
	# int8 twins as a user's migration writes them: one calibration
	# sample of the tool's own seeded inputs, no accuracy fallback
	for q in $quant; do
		# shellcheck disable=SC2046
		set -- $(echo "$q" | tr : ' ')
		[ -f "$D/$1.onnx" ] && continue
		o=$1 src=$2; shift 2
		# exit 1 with --force: written although the criterion fails
		# (a random-weight model's int8 twin is for timing, not accuracy)
		"$OPMIG" quantize "$D/$src.onnx" -o "$D/$o.onnx" "$@" --samples 1 \
			--no-fallback --force --threads 1 >/dev/null 2>&1
		rc=$?
		[ $rc -le 1 ] && [ -f "$D/$o.onnx" ] || suite_die "quantize $src $* failed (exit $rc)"
	done
fi

models=""
for m in $names; do
	models="$models $D/$m.onnx"
done
for t in ${BROAD_THREADS:-1 2}; do
	INTERP_MODELS=$models INTERP_THREADS=$t INTERP_ROUNDS=${BROAD_ROUNDS:-3} INTERP_REPEAT=5 \
		OPMIG=$OPMIG BENCH_DIR=$BENCH_DIR sh "$here/interp.sh" || suite_die "interp.sh failed"
done
