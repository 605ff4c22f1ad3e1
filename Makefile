# SceneSound — the two commands a fresh Debian machine needs are `make demo` and `make test`;
# both install missing Debian packages through scripts/deps first.

export PATH := /opt/swift/usr/bin:$(PATH)
SWIFT ?= swift

.PHONY: all deps build test demo bench clean

all: build

deps:
	scripts/deps test

build: deps
	$(SWIFT) build

# Builds everything (binaries included) then runs every test target.
test: deps
	$(SWIFT) build --build-tests
	SWIFT_BACKTRACE=enable=no $(SWIFT) test --skip-build

demo: deps
	$(SWIFT) build
	scripts/demo

# Heavy benchmarks live in the nested Benchmarks package.
bench:
	scripts/deps bench
	cd Benchmarks && $(SWIFT) package --allow-writing-to-package-directory benchmark

clean:
	rm -rf .build Benchmarks/.build out
