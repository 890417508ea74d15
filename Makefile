# opmig build.  `make` builds bin/opmig; `make test` runs every test suite;
# `make check` does the same under AddressSanitizer and UBSan; `make deps`
# installs the Debian packages the build and the tests need.

PREFIX ?= /usr/local
ifeq ($(origin CC),default)
CC := gcc
endif
PKGS := libprotobuf-c libcjson libzip cunit openblas libxxhash
DEB_PKGS := libprotobuf-c-dev protobuf-c-compiler libonnx-dev libcjson-dev \
	libzip-dev libcunit1-dev libopenblas-dev libxxhash-dev pkg-config groff-base \
	python3-onnx python3-numpy libonnx-testdata libxml2-utils graphviz \
	python3-opencv libdnnl-dev
ONNX_PROTO := /usr/include/onnx/onnx.proto

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wundef -Wwrite-strings
ifneq ($(CI),)
WARN += -Werror
endif
ifneq ($(WERROR),)
WARN += -Werror
endif

# BUILD selects the flavour: release (default), asan, or fuzz (clang with
# libFuzzer, ASan and UBSan: `make fuzz`).
BUILD ?= release
FUZZ_CC ?= clang
ifeq ($(BUILD),fuzz)
CC := $(FUZZ_CC)
OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
	-fno-sanitize-recover=undefined
LDOPT := -fsanitize=address,undefined
else ifeq ($(BUILD),asan)
OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined
LDOPT := -fsanitize=address,undefined
else
OPT := -O2 -g
LDOPT :=
# gcc's -O2 vectorizes only loops that need no scalar epilogue (its
# "very-cheap" cost model): most of the interpreter's elementwise loops
# (Clip, activations, bias adds) stayed scalar.  The -O3 cost model
# vectorizes them; float reductions keep their order (no -ffast-math).
ifeq ($(shell $(CC) --version 2>/dev/null | grep -c clang),0)
OPT += -fvect-cost-model=dynamic
endif
endif

B := build/$(BUILD)
ifeq ($(BUILD),fuzz)
# No harness runs the interpreter's kernels (tests/fuzz/README.md), and
# clang 14's instrumentation of their unrolled vector code takes minutes a
# file (k_conv_dtile.c over ten under UBSan, pgemm_k512.c three and a half
# under ASan with coverage; 5 s each plain): the fuzz build compiles
# runtime/kernels/ without it.  make check (gcc, ASan and UBSan) runs every
# kernel under the sanitizers.
$(B)/runtime/kernels/%.o: OPT := -O1 -g -fno-omit-frame-pointer
endif
GEN := $(B)/gen
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CPPFLAGS += -I. -I$(GEN) -D_GNU_SOURCE
CFLAGS += -std=c11 $(OPT) $(WARN) $(PKG_CFLAGS) -MMD -MP
# oneDNN (libdnnl-dev) ships no pkg-config file; it runs on OpenMP
# (libgomp), whose thread count the interpreter sets per call.
LDLIBS += $(PKG_LIBS) -ldnnl -lgomp -lm

MODULES := ir oprules scanner rewriters runtime runtime/kernels validators batch probe
LIB_SRC := $(foreach m,$(MODULES),$(wildcard $(m)/*.c))
CLI_SRC := $(wildcard cli/*.c)
TEST_SRC := $(wildcard tests/unit/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o) $(GEN)/onnx.pb-c.o
CLI_OBJ := $(CLI_SRC:%.c=$(B)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(B)/%.o)

ifeq ($(BUILD),release)
OPMIG := bin/opmig
else
OPMIG := $(B)/bin/opmig
endif
RUNNER := $(B)/bin/unit-tests
CONF := $(B)/bin/conformance

# Fuzz harnesses (tests/fuzz): libFuzzer programs build/fuzz/fuzz_NAME, and
# in every flavour a replay program $(B)/fuzz/replay-NAME that make test
# runs over the checked-in corpus and regressions without libFuzzer.
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(FUZZ_NAMES:%=build/fuzz/fuzz_%)
REPLAYS := $(FUZZ_NAMES:%=$(B)/fuzz/replay-%)
SECONDS ?= 60
# FUZZ_RUNS=N: N inputs per harness from seed FUZZ_SEED (default 1) instead
# of SECONDS of time: the same inputs on every machine (CI's smoke run).
FUZZ_LIMIT = $(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS) -seed=$(or $(FUZZ_SEED),1),-max_total_time=$(SECONDS))

.PHONY: all deps demo test check install clean bench conformance fuzz fuzz-run \
	fuzz-bins sweep-opsets probe-ort probe-opencv test-noavx512
all: deps $(OPMIG)

deps:
	@sh tools/deps.sh $(DEB_PKGS)
	@sh tools/npm_deps.sh

$(GEN)/onnx.pb-c.c $(GEN)/onnx.pb-c.h: $(ONNX_PROTO)
	@mkdir -p $(GEN)
	protoc-c --c_out=$(GEN) -I$(dir $(ONNX_PROTO)) $(ONNX_PROTO)

$(GEN)/onnx.pb-c.o: $(GEN)/onnx.pb-c.c
	$(CC) -std=c11 $(OPT) $(PKG_CFLAGS) -I$(GEN) -c $< -o $@

$(B)/%.o: %.c $(GEN)/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(B)/libopmig.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(OPMIG): $(CLI_OBJ) $(B)/libopmig.a
	@mkdir -p $(dir $@)
	$(CC) $(LDOPT) -o $@ $(CLI_OBJ) $(B)/libopmig.a $(LDLIBS)

CLI_LIB_OBJ := $(filter-out $(B)/cli/main.o,$(CLI_OBJ))
$(RUNNER): $(TEST_OBJ) $(CLI_LIB_OBJ) $(B)/libopmig.a
	@mkdir -p $(dir $@)
	$(CC) $(LDOPT) -o $@ $(TEST_OBJ) $(CLI_LIB_OBJ) $(B)/libopmig.a $(LDLIBS) \
		-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup

$(CONF): $(B)/tests/conformance/runner.o $(B)/libopmig.a
	@mkdir -p $(dir $@)
	$(CC) $(LDOPT) -o $@ $(B)/tests/conformance/runner.o $(B)/libopmig.a $(LDLIBS)

$(B)/fuzz/replay-%: $(B)/tests/fuzz/fuzz_%.o $(B)/tests/fuzz/replay.o $(B)/libopmig.a
	@mkdir -p $(dir $@)
	$(CC) $(LDOPT) -o $@ $(B)/tests/fuzz/fuzz_$*.o $(B)/tests/fuzz/replay.o \
		$(B)/libopmig.a $(LDLIBS)

ifeq ($(BUILD),fuzz)
build/fuzz/fuzz_%: build/fuzz/tests/fuzz/fuzz_%.o build/fuzz/libopmig.a
	$(CC) $(LDOPT) -fsanitize=fuzzer -o $@ $< build/fuzz/libopmig.a $(LDLIBS)

fuzz-bins: $(FUZZ_BINS)
endif

# libFuzzer harnesses (Debian's clang): build/fuzz/fuzz_NAME.
FUZZ_DEB_PKGS := clang libclang-rt-dev
fuzz: deps
	@sh tools/deps.sh $(FUZZ_DEB_PKGS)
	$(MAKE) BUILD=fuzz fuzz-bins

# Run each harness SECONDS seconds (default 60), one after the other, from
# its checked-in corpus (new inputs go to build/fuzz/corpus/NAME, crashes
# to build/fuzz/artifacts/NAME/); fails on the first finding.
fuzz-run: fuzz
	@for n in $(FUZZ_NAMES); do \
		mkdir -p build/fuzz/corpus/$$n build/fuzz/artifacts/$$n; \
		dict=; [ -f tests/fuzz/$$n.dict ] && dict=-dict=tests/fuzz/$$n.dict; \
		echo "== fuzz $$n ($(if $(FUZZ_RUNS),$(FUZZ_RUNS) runs,$(SECONDS) s))"; \
		TMPDIR=$${FUZZ_TMPDIR:-/tmp} ./build/fuzz/fuzz_$$n $$dict \
			$(FUZZ_LIMIT) -timeout=10 -rss_limit_mb=2048 \
			-print_final_stats=1 \
			-artifact_prefix=build/fuzz/artifacts/$$n/ \
			build/fuzz/corpus/$$n tests/fuzz/corpus/$$n \
			>build/fuzz/$$n.log 2>&1; rc=$$?; \
		grep -E '^#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units' build/fuzz/$$n.log | tail -3; \
		if [ $$rc -ne 0 ]; then tail -60 build/fuzz/$$n.log; \
			echo "fuzz $$n: finding in build/fuzz/artifacts/$$n/ (log build/fuzz/$$n.log)"; \
			exit 1; fi; \
	done

# The interpreter against every backend test case (see tests/conformance).
conformance: deps $(CONF)
	$(CONF)

# Every backend node case migrated to each opset from 7 to 21 and judged
# by onnx.checker and onnxruntime-node (see tests/sweep/README.md).
sweep-opsets: deps $(OPMIG)
	OPMIG=$(abspath $(OPMIG)) sh tests/sweep/opsets.sh $(abspath build/sweep-opsets)

# The main job on the sample model: migrate it to the default target
# (generic-npu) with a static batch of 1, validated, and print the report.
demo: all
	@mkdir -p build/demo
	./$(OPMIG) migrate testdata/sample.onnx --batch 1 -o build/demo/sample.generic-npu.onnx

test: deps $(OPMIG) $(RUNNER) $(CONF) $(REPLAYS)
	OPMIG=$(abspath $(OPMIG)) RUNNER=$(abspath $(RUNNER)) \
		CONFORMANCE=$(abspath $(CONF)) FUZZ_REPLAY=$(abspath $(B)/fuzz) \
		sh tests/run.sh

check: deps
	$(MAKE) BUILD=asan test

# The unit suites, the conformance run and a few CLI tests on an emulated
# x86-64 CPU without AVX-512 (QEMU user mode, a Haswell: AVX2 and FMA), so
# that the kernels' run-time choices take their AVX2 and C paths: see
# tests/noavx512.sh.  The build itself assumes no more than x86-64.
NOAVX512_DEB_PKGS := qemu-user
test-noavx512: deps $(OPMIG) $(RUNNER) $(CONF)
	@sh tools/deps.sh $(NOAVX512_DEB_PKGS)
	OPMIG=$(abspath $(OPMIG)) RUNNER=$(abspath $(RUNNER)) CONFORMANCE=$(abspath $(CONF)) \
		sh tests/noavx512.sh

bench: all
	sh bench/run.sh
	sh bench/scan.sh
	sh bench/plan.sh
	sh bench/quant.sh
	sh bench/lowp.sh
	sh bench/broad.sh
	sh bench/ops.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man5 \
		$(DESTDIR)$(PREFIX)/share/opmig/oprules/examples \
		$(DESTDIR)$(PREFIX)/share/opmig/runtimes
	install -m 755 $(OPMIG) $(DESTDIR)$(PREFIX)/bin/opmig
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 644 oprules/examples/*.json $(DESTDIR)$(PREFIX)/share/opmig/oprules/examples/
	for f in oprules/*.json; do [ -e "$$f" ] || continue; \
		install -m 644 "$$f" $(DESTDIR)$(PREFIX)/share/opmig/oprules/; done
	install -m 755 runtimes/onnxruntime-node.js runtimes/opencv-dnn.py \
		$(DESTDIR)$(PREFIX)/share/opmig/runtimes/

# The long probes (see probe/README.md): the whole default domain at opset
# 17 against onnxruntime-node (probe's self-test), and OpenCV DNN over the
# opsets of oprules/opencv-dnn.json (the file it was derived from).
PROBE_JOBS ?= 2
probe-ort: all
	@mkdir -p build/probe-ort
	time ./$(OPMIG) probe --runtime 'node runtimes/onnxruntime-node.js {model} {inputs} {outdir}' \
		--opset 17 -j $(PROBE_JOBS) --id onnxruntime-node -o build/probe-ort/ort.json \
		--workdir build/probe-ort/work --resume --format json --report build/probe-ort/report.json
	./$(OPMIG) probe --runtime 'node runtimes/onnxruntime-node.js {model} {inputs} {outdir}' \
		--opset 17 -j $(PROBE_JOBS) --id onnxruntime-node -o build/probe-ort/ort.json \
		--workdir build/probe-ort/work --resume --quiet --format html --report build/probe-ort/index.html
	./$(OPMIG) probe --runtime 'node runtimes/onnxruntime-node.js {model} {inputs} {outdir}' \
		--opset 17 -j $(PROBE_JOBS) --id onnxruntime-node -o build/probe-ort/ort.json \
		--workdir build/probe-ort/work --resume --quiet

probe-opencv: all
	@mkdir -p build/probe-opencv
	time ./$(OPMIG) probe --runtime '/usr/bin/python3 runtimes/opencv-dnn.py {model} {inputs} {outdir}' \
		--opset 7..17 -j $(PROBE_JOBS) --id opencv-dnn --name 'OpenCV DNN 4.6 (probed)' \
		-o build/probe-opencv/opencv-dnn.json --workdir build/probe-opencv/work --resume \
		--format html --report build/probe-opencv/index.html

clean:
	rm -rf build bin

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) \
	$(B)/tests/conformance/runner.d $(wildcard $(B)/tests/fuzz/*.d)
