# SceneSound — the two commands a fresh Debian machine needs are `make demo` and `make test`;
# both install missing Debian packages through scripts/deps first.

export PATH := /opt/swift/usr/bin:$(PATH)
SWIFT ?= swift

.PHONY: all deps build test test-build load soak fuzz demo bench clean docs deb package-test

all: build

deps:
	scripts/deps test

build: deps
	$(SWIFT) build

# Builds everything (binaries included), runs every test target, then the soak on its own.
# --no-parallel: the suites start real servers with real-time render threads, PulseAudio and
# X servers; on a small machine, running them side by side only tests the scheduler.
# scripts/run-tests: SWIFT_BACKTRACE=enable=no (a crashing test must fail fast, not hang in the
# backtracer), a log under .build/test-logs, the failures repeated at the end of the output, and
# a run that exits 0 failed unless Swift Testing's own report (xunit) shows every test ended.
TEST = SWIFT=$(SWIFT) scripts/run-tests
# The capture's load measurements run 20 s each here, their bars per minute scaled; `make load`
# runs them for a minute each.
LOAD_SECONDS = SCENESOUND_CAPTURE_SCALE_SECONDS=$(1) SCENESOUND_CAPTURE_LOAD_SECONDS=$(1)
test: test-build
	$(call LOAD_SECONDS,20) $(TEST) .build/test-logs/suites.log --skip SoakTests
	SCENESOUND_SOAK_SECONDS=60 $(TEST) .build/test-logs/soak.log --filter SoakTests

# The tests' build. The test packages (servers, compositors, apps: most of a fresh machine's
# downloads) install while Swift compiles, which needs only the build packages; so does the C
# library that LibraryTests installs (its single-threaded optimised compile fills the cores the
# package build leaves idle at its start and its links).
test-build:
	scripts/deps build
	scripts/deps test & deps=$$!; $(MAKE) --no-print-directory lib & lib=$$!; \
	  $(SWIFT) build --build-tests; built=$$?; wait $$deps && wait $$lib && exit $$built

# The capture under load and at scale (32 apps), a minute each way on both servers.
load: test-build
	$(call LOAD_SECONDS,60) $(TEST) .build/test-logs/load.log --filter "CaptureScaleTests|CaptureUnderLoadTests"

# The long soak: five minutes.
soak: test-build
	SCENESOUND_SOAK_SECONDS=300 $(TEST) .build/test-logs/soak.log --filter SoakTests

# libFuzzer on the protocol decoder for a bounded time (FUZZ_SECONDS), over the committed corpus.
FUZZ_SECONDS ?= 120
fuzz:
	Fuzz/run.sh $(FUZZ_SECONDS)

demo: deps
	$(SWIFT) build
	scripts/demo

# Heavy benchmarks live in the nested Benchmarks package: run and store them, print them, fail
# if any render block allocated (p90 by the tool against Benchmarks/Thresholds, every block by
# check_zero_mallocs.py), then compare with OpenAL Soft and a measured floor on the same scene, then the daemon's CPU
# for 32 apps taken over by --capture-apps against 32 protocol streams (private PulseAudio);
# OpenAL Soft's timbre and near field measured as TimbreTests and NearFieldTests measure ours.
# Last, `make load`: the capture under load and at scale for a minute each.
# scripts/bench-old-new: this build's CPU against 5b2c665's (built once into .build-bench-old/,
# BENCH_OLD_COMMIT=none skips it) at 255 and 1024 sources, in turns, with OpenAL Soft, and the
# speaker renderings against the binaural one.
bench:
	scripts/deps bench
	cd Benchmarks && $(SWIFT) package --allow-writing-to-package-directory benchmark baseline update bench --no-progress
	cd Benchmarks && $(SWIFT) package benchmark baseline read bench --no-progress
	cd Benchmarks && $(SWIFT) package benchmark thresholds check bench --target RenderBenchmarks --no-progress
	Benchmarks/check_zero_mallocs.py Benchmarks/.benchmarkBaselines/RenderBenchmarks/bench/results.json
	scripts/bench-compare
	scripts/bench-old-new
	scripts/openal-timbre
	scripts/bench-capture
	$(MAKE) load

clean:
	rm -rf .build .build-release .build-clib Benchmarks/.build out dist

# The Debian packages scenesound, libscenesound0 and libscenesound-dev in dist/, the programs
# with the Swift runtime linked in, checked by lintian (docs/PACKAGING.md).
deb:
	scripts/deps package
	scripts/make-deb

# The packages installed on clean Debian 12 and 13 (debootstrap chroots, cached outside the
# repository) that never saw Swift, run there against a PulseAudio of their own, removed.
package-test: deb
	scripts/package-test

# The Swift client's API documentation (DocC, swift-docc-plugin) as a static site in
# .build/docs/SceneSoundClient (open index.html through any web server).
docs:
	rm -rf .build/docs/SceneSoundClient && mkdir -p .build/docs
	$(SWIFT) package --allow-writing-to-directory .build/docs generate-documentation --target SceneSoundClient \
		--output-path .build/docs/SceneSoundClient --transform-for-static-hosting --hosting-base-path SceneSoundClient
	@echo "API documentation: .build/docs/SceneSoundClient/documentation/scenesoundclient/index.html"

# libscenesound.so.0 (Swift standard library linked in, only scenesound_* exported) into
# LIB_BUILD, and `make install PREFIX=…`: library, header, scenesound.pc, both programs (built
# in release, or taken from BINARIES=DIR), the systemd user unit, man pages from --help.
.PHONY: lib install
PREFIX ?= /usr/local
LIB_BUILD ?= .build-clib/lib
BINARIES ?=
lib:
	packaging/build-lib.sh $(LIB_BUILD)

install: lib
	packaging/install.sh $(PREFIX) $(LIB_BUILD) $(BINARIES)
