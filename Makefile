# CaptureKit — build, test, install, benchmark. `make help` lists the targets.
SWIFT   ?= swift
CC      ?= cc
CXX     ?= c++
PYTHON  ?= python3
PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include

VERSION       := $(shell sed -n 's/^\#define CK_VERSION_STRING "\(.*\)"/\1/p' include/capturekit.h)
MAJOR         := $(firstword $(subst ., ,$(VERSION)))
DIST_SCRATCH  := .build-dist
DIST          := $(DIST_SCRATCH)/release
LIB           := $(DIST)/libcapturekit.so
OUT           := $(DIST_SCRATCH)/c
CWARN         := -std=c99 -Wall -Wextra -Werror -pedantic
LINK_CK       := -L$(DIST) -lcapturekit -Wl,-rpath,'$$ORIGIN/../release' -Wl,--no-undefined -lm

.PHONY: all help bootstrap lib test test-swift check-abi test-c examples test-examples test-python \
        demo bench install uninstall python-wheel valgrind clean

all: lib

help:
	@echo "make demo      run the main example (bootstraps missing packages first)"
	@echo "make test      run every test: Swift, ABI check, C tests, examples, pytest"
	@echo "make lib       build $(LIB) (static Swift runtime, SONAME libcapturekit.so.$(MAJOR))"
	@echo "make install   PREFIX=... install header, .so, symlinks and capturekit.pc"
	@echo "make bench     run the benchmarks (numbers go to BENCHMARKS.md)"
	@echo "make valgrind  run the C test under valgrind"

bootstrap:
	@scripts/bootstrap

# The shipping library: Swift runtime linked statically, SONAME set, only ck_* exported.
lib: bootstrap
	$(SWIFT) build -c release --product capturekit --scratch-path $(DIST_SCRATCH) \
	  -Xswiftc -static-stdlib -Xlinker -soname=libcapturekit.so.$(MAJOR)
	@ln -sf libcapturekit.so $(DIST)/libcapturekit.so.$(MAJOR)

test: bootstrap test-swift check-abi test-c test-examples test-python
	@echo "make test: all suites passed"

test-swift: bootstrap
	$(SWIFT) test 2>&1 | tee .build-swift-test.log | grep -vE '^(\[|Test Suite|Test Case|.*started at)' ; \
	  test $${PIPESTATUS[0]} -eq 0
SHELL := /bin/bash

check-abi: lib
	scripts/check_abi.sh $(LIB) include/capturekit.h

$(OUT)/test_capi: Tests/capi/test_capi.c include/capturekit.h lib
	@mkdir -p $(OUT)
	$(CC) $(CWARN) -g -Iinclude $< $(LINK_CK) -o $@

test-c: $(OUT)/test_capi
	$(OUT)/test_capi

$(OUT)/box_and_rays: examples/c/box_and_rays.c include/capturekit.h lib
	@mkdir -p $(OUT)
	$(CC) $(CWARN) -O2 -Iinclude $< $(LINK_CK) -o $@

examples: $(OUT)/box_and_rays

test-examples: examples
	$(OUT)/box_and_rays > /dev/null
	CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) examples/python/box_and_rays.py > /dev/null
	@echo "examples: C and Python ran"

test-python: lib
	CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) -m pytest -q bindings/python/tests

demo: examples
	$(OUT)/box_and_rays

bench: lib
	@mkdir -p $(OUT)
	$(CC) -O3 -fno-math-errno -fno-trapping-math -std=c99 -Iinclude benchmarks/bench_raycast.c $(LINK_CK) -o $(OUT)/bench_raycast
	$(OUT)/bench_raycast
	CAPTUREKIT_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) benchmarks/bench_python.py

install: lib
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 644 include/capturekit.h $(DESTDIR)$(INCDIR)/capturekit.h
	install -m 755 $(LIB) $(DESTDIR)$(LIBDIR)/libcapturekit.so.$(VERSION)
	ln -sf libcapturekit.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libcapturekit.so.$(MAJOR)
	ln -sf libcapturekit.so.$(MAJOR) $(DESTDIR)$(LIBDIR)/libcapturekit.so
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCDIR@|$(INCDIR)|; s|@VERSION@|$(VERSION)|' \
	  scripts/capturekit.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/capturekit.pc

uninstall:
	rm -f $(DESTDIR)$(INCDIR)/capturekit.h $(DESTDIR)$(LIBDIR)/libcapturekit.so* $(DESTDIR)$(LIBDIR)/pkgconfig/capturekit.pc

python-wheel: lib
	cp $(LIB) bindings/python/capturekit/libcapturekit.so
	$(PYTHON) -m pip wheel --no-deps --no-build-isolation -w $(DIST_SCRATCH)/wheel bindings/python

valgrind: $(OUT)/test_capi
	valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
	  --errors-for-leak-kinds=definite,indirect $(OUT)/test_capi

clean:
	rm -rf .build .build-dist .build-asan .build-swift-test.log bindings/python/capturekit/libcapturekit.so* \
	  bindings/python/build bindings/python/*.egg-info
