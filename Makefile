# CaptureKit — build, test, install, benchmark. `make help` lists the targets.
SWIFT   ?= swift
CC      ?= cc
CXX     ?= c++
PYTHON  ?= python3
PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include

HEADERS       := include/capturekit.h $(wildcard include/capturekit/*.h)
VERSION       := $(shell sed -n 's/^\#define CK_VERSION_STRING "\(.*\)"/\1/p' include/capturekit/ck_base.h)
MAJOR         := $(firstword $(subst ., ,$(VERSION)))
DIST_SCRATCH  := .build-dist
DIST          := $(DIST_SCRATCH)/release
LIB           := $(DIST)/libcapturekit.so
OUT           := $(DIST_SCRATCH)/c
CWARN         := -std=c99 -Wall -Wextra -Werror -pedantic
LINK_CK       := -L$(DIST) -lcapturekit -Wl,-rpath,'$$ORIGIN/../release' -Wl,--no-undefined -lm

.PHONY: all help bootstrap lib test test-swift check-abi test-c examples test-examples test-python \
        test-no-toolchain test-valgrind test-install \
        demo bench install uninstall python-wheel clean fuzz fuzz-build fuzz-seeds

all: lib

help:
	@echo "make demo      run the main example (bootstraps missing packages first)"
	@echo "make test      run every test: Swift, ABI check, C tests, examples, pytest"
	@echo "make lib       build $(LIB) (static Swift runtime, SONAME libcapturekit.so.$(MAJOR))"
	@echo "make install   PREFIX=... install header, .so, symlinks and capturekit.pc"
	@echo "make bench     run the benchmarks (numbers go to BENCHMARKS.md)"
	@echo "make fuzz SECONDS=N  run every libFuzzer target N seconds (RELIABILITY.md)"

bootstrap:
	@scripts/bootstrap

# The shipping library: Swift runtime linked statically, SONAME set, only ck_* exported.
lib: bootstrap
	$(SWIFT) build -c release --product capturekit --scratch-path $(DIST_SCRATCH) \
	  -Xswiftc -static-stdlib -Xlinker -soname=libcapturekit.so.$(MAJOR)
	@ln -sf libcapturekit.so $(DIST)/libcapturekit.so.$(MAJOR)

test: bootstrap test-swift check-abi test-c test-examples test-python test-no-toolchain test-valgrind test-install
	@echo "make test: all suites passed"

test-swift: bootstrap
	$(SWIFT) test 2>&1 | tee .build-swift-test.log | grep -vE '^(\[|Test Suite|Test Case|.*started at|◇ |✔ Test [^r]|✔ Suite |Building|Compiling|Write|Planning)' ; \
	  test $${PIPESTATUS[0]} -eq 0
SHELL := /bin/bash

check-abi: lib
	scripts/check_abi.sh $(LIB) include/capturekit.h

$(OUT)/test_capi: Tests/capi/test_capi.c Tests/capi/check.h $(HEADERS) lib
	@mkdir -p $(OUT)
	$(CC) $(CWARN) -g -Iinclude $< $(LINK_CK) -o $@

$(OUT)/test_guidance: Tests/capi/test_guidance.c Tests/capi/check.h $(HEADERS) lib
	@mkdir -p $(OUT)
	$(CC) $(CWARN) -g -Iinclude $< $(LINK_CK) -o $@

$(OUT)/test_png: Tests/capi/test_png.c Tests/capi/check.h $(HEADERS) lib
	@mkdir -p $(OUT)
	$(CC) $(CWARN) -g -Iinclude $< $(LINK_CK) -o $@

$(OUT)/test_depth: Tests/capi/test_depth.c Tests/capi/check.h $(HEADERS) lib
	@mkdir -p $(OUT)
	$(CC) $(CWARN) -g -Iinclude $< $(LINK_CK) -o $@

$(OUT)/test_zstream: Tests/capi/test_zstream.c Tests/capi/check.h $(HEADERS) lib
	@mkdir -p $(OUT)
	$(CC) $(CWARN) -g -Iinclude $< $(LINK_CK) -o $@

$(OUT)/test_dataset: Tests/capi/test_dataset.c Tests/capi/check.h $(HEADERS) lib
	@mkdir -p $(OUT)
	$(CC) $(CWARN) -g -Iinclude $< $(LINK_CK) -o $@

test-c: $(OUT)/test_capi $(OUT)/test_png $(OUT)/test_depth $(OUT)/test_guidance $(OUT)/test_zstream $(OUT)/test_dataset
	$(OUT)/test_capi
	$(OUT)/test_guidance
	$(OUT)/test_png
	$(OUT)/test_depth Tests/golden
	$(OUT)/test_zstream
	$(OUT)/test_dataset

$(OUT)/box_and_rays: examples/c/box_and_rays.c $(HEADERS) lib
	@mkdir -p $(OUT)
	$(CC) $(CWARN) -O2 -Iinclude $< $(LINK_CK) -o $@

$(OUT)/guided_capture: examples/c/guided_capture.c $(HEADERS) lib
	@mkdir -p $(OUT)
	$(CC) $(CWARN) -O2 -Iinclude $< $(LINK_CK) -o $@

$(OUT)/depth_recording: examples/c/depth_recording.c $(HEADERS) lib
	@mkdir -p $(OUT)
	$(CC) $(CWARN) -O2 -Iinclude $< $(LINK_CK) -o $@

examples: $(OUT)/box_and_rays $(OUT)/depth_recording $(OUT)/guided_capture $(OUT)/capture_demo

$(OUT)/capture_demo: examples/c/capture_demo.c $(HEADERS) lib
	@mkdir -p $(OUT)
	$(CC) $(CWARN) -O2 -Iinclude $< $(LINK_CK) -o $@

test-examples: examples
	$(OUT)/box_and_rays > /dev/null
	$(OUT)/capture_demo $(OUT)/demo-dataset > /dev/null
	$(OUT)/guided_capture > /dev/null
	$(OUT)/depth_recording $(OUT)/depth_recording.ckdepth > /dev/null
	CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) examples/python/box_and_rays.py > /dev/null
	CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) examples/python/guided_capture.py > /dev/null
	d=$$(mktemp -d) && CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) examples/python/capture_demo.py $$d/dataset > /dev/null && rm -rf $$d
	@echo "examples: C and Python ran"

test-python: lib
	CAPTUREKIT_DEMO_DATASET=$(abspath $(OUT)/demo-dataset) CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) -m pytest -q bindings/python/tests

# The shipped .so must load and work with the Swift toolchain hidden (C host and Python host).
test-no-toolchain: $(OUT)/test_capi $(OUT)/test_guidance
	scripts/run_without_toolchain.sh $(abspath $(OUT)/test_capi) > /dev/null
	scripts/run_without_toolchain.sh $(abspath $(OUT)/test_guidance) > /dev/null
	scripts/run_without_toolchain.sh CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=$(abspath bindings/python) \
	  $(shell $(PYTHON) -c 'import sys; print(sys.executable)') -c \
	  'import capturekit as ck; print("python without toolchain: capturekit", ck.__version__)'

# The C test under valgrind (skipped with a message where valgrind is missing).
test-valgrind: $(OUT)/test_capi $(OUT)/test_guidance $(OUT)/test_zstream
	@if command -v valgrind >/dev/null 2>&1; then \
	  valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
	    --errors-for-leak-kinds=definite,indirect $(OUT)/test_capi > /dev/null && echo "valgrind: test_capi clean"; \
	else echo "valgrind not installed: skipped"; fi
	@if command -v valgrind >/dev/null 2>&1; then \
	  valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
	    --errors-for-leak-kinds=definite,indirect $(OUT)/test_guidance > /dev/null && echo "valgrind: test_guidance clean"; \
	else echo "valgrind not installed: skipped"; fi
	@if command -v valgrind >/dev/null 2>&1; then \
	  valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
	    --errors-for-leak-kinds=definite,indirect $(OUT)/test_zstream > /dev/null && echo "valgrind: test_zstream clean"; \
	else echo "valgrind not installed: skipped"; fi

demo: bootstrap examples
	$(OUT)/capture_demo capturekit-demo-dataset

bench: lib
	@mkdir -p $(OUT)
	$(CC) -O3 -fno-math-errno -fno-trapping-math -std=c99 -Iinclude benchmarks/bench_raycast.c $(LINK_CK) -o $(OUT)/bench_raycast
	$(OUT)/bench_raycast
	$(CC) -O3 -fno-math-errno -fno-trapping-math -std=c99 -Iinclude benchmarks/bench_guidance.c $(LINK_CK) -o $(OUT)/bench_guidance
	$(OUT)/bench_guidance
	$(CC) -O2 -std=c99 -Iinclude benchmarks/bench_depth.c $(LINK_CK) -lz -lzstd -o $(OUT)/bench_depth
	$(OUT)/bench_depth
	$(CC) -O2 -std=c99 -Iinclude benchmarks/bench_zstream.c $(LINK_CK) -o $(OUT)/bench_zstream
	$(OUT)/bench_zstream
	$(CC) -O2 -std=c99 -Iinclude benchmarks/bench_session.c $(LINK_CK) -o $(OUT)/bench_session
	$(OUT)/bench_session
	@$(PYTHON) -c 'import cv2' 2>/dev/null || $(PYTHON) -m pip install -q opencv-python-headless || true
	CAPTUREKIT_LIBRARY=$(abspath $(LIB)) $(PYTHON) benchmarks/bench_depth.py
	CAPTUREKIT_LIBRARY=$(abspath $(LIB)) $(PYTHON) benchmarks/bench_png.py
	CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) benchmarks/bench_python.py
	$(SWIFT) build -c release --product CaptureKitBench --scratch-path .build-bench
	.build-bench/release/CaptureKitBench

install: lib
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR)/capturekit $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 644 include/capturekit.h $(DESTDIR)$(INCDIR)/capturekit.h
	install -m 644 include/capturekit/*.h $(DESTDIR)$(INCDIR)/capturekit/
	install -m 755 $(LIB) $(DESTDIR)$(LIBDIR)/libcapturekit.so.$(VERSION)
	ln -sf libcapturekit.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libcapturekit.so.$(MAJOR)
	ln -sf libcapturekit.so.$(MAJOR) $(DESTDIR)$(LIBDIR)/libcapturekit.so
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCDIR@|$(INCDIR)|; s|@VERSION@|$(VERSION)|' \
	  scripts/capturekit.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/capturekit.pc

# Install into a staging prefix and build a consumer the way users do: pkg-config only.
STAGE := $(abspath $(DIST_SCRATCH)/stage)
test-install: lib
	rm -rf $(STAGE)
	$(MAKE) --no-print-directory install PREFIX=$(STAGE) > /dev/null
	test "$$(readlink $(STAGE)/lib/libcapturekit.so)" = libcapturekit.so.$(MAJOR)
	test "$$(readlink $(STAGE)/lib/libcapturekit.so.$(MAJOR))" = libcapturekit.so.$(VERSION)
	$(CC) $(CWARN) examples/c/box_and_rays.c $$(PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig pkg-config --cflags --libs capturekit) \
	  -lm -Wl,-rpath,$(STAGE)/lib -o $(STAGE)/box_and_rays
	readelf -d $(STAGE)/box_and_rays | grep -q 'NEEDED.*\[libcapturekit.so.$(MAJOR)\]'
	$(STAGE)/box_and_rays > /dev/null
	@echo "install: header, .so.$(VERSION) + symlinks and capturekit.pc work with pkg-config"

uninstall:
	rm -rf $(DESTDIR)$(INCDIR)/capturekit.h $(DESTDIR)$(INCDIR)/capturekit $(DESTDIR)$(LIBDIR)/libcapturekit.so* $(DESTDIR)$(LIBDIR)/pkgconfig/capturekit.pc

python-wheel: lib
	cp $(LIB) bindings/python/capturekit/libcapturekit.so
	$(PYTHON) -m pip wheel --no-deps --no-build-isolation -w $(DIST_SCRATCH)/wheel bindings/python

# Fuzzing (RELIABILITY.md): libFuzzer + ASan binary in .build-fuzz; `make test` only replays the
# committed corpus (CorpusReplayTests, part of swift test).
SECONDS ?= 60
fuzz-build:
	Tests/fuzz/build.sh

fuzz: fuzz-build
	Tests/fuzz/run.sh $(SECONDS)

fuzz-seeds: fuzz-build
	CK_FUZZ_SEEDS=$(abspath .build-fuzz/seeds) CK_REPO=$(abspath .) .build-fuzz/ckfuzz
	@echo "seeds in .build-fuzz/seeds/<target>/: copy new ones into Tests/fuzz/corpus/<target>/, then make fuzz"

clean:
	rm -rf .build .build-dist .build-asan .build-fuzz .build-swift-test.log bindings/python/capturekit/libcapturekit.so* \
	  bindings/python/build bindings/python/*.egg-info
