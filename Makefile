# The two commands a newcomer needs: `make dev` and `make test`.
SHELL := /bin/bash

MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c
BIN_DIR       := $(CURDIR)/.bin
MINIO_BIN     := $(BIN_DIR)/minio-$(MINIO_VERSION)/minio
# Stripe's API double for card payments in dev and tests (decisions §18).
STRIPE_MOCK_VERSION := v0.203.0
STRIPE_MOCK_BIN     := $(BIN_DIR)/stripe-mock-$(STRIPE_MOCK_VERSION)/stripe-mock
# Tests take a while to compile the in-process Temporal server; keep the
# shared Go build cache (GOCACHE) warm and never rebuild what has not changed.
GO_TEST_FLAGS ?= -count=1 -timeout 15m
export SVC_MINIO_BIN := $(MINIO_BIN)
export SVC_STRIPE_MOCK_BIN := $(STRIPE_MOCK_BIN)

.PHONY: dev test build bench load minio stripe-mock deps postgres-check system-libs clean-dev record-histories fuzz soak

# Every Go fuzz target, as package:name. `make test` fuzzes each for
# FUZZTIME executions (a count, not a duration: Go 1.26's fuzz coordinator
# can fail a duration run at its deadline with a bare "context deadline
# exceeded", golang/go#75804, fixed in Go 1.27); `make fuzz` for FUZZ_LONG
# (2 minutes; a bare deadline error there with no new testdata file is that
# race, not a finding). The seed corpora (f.Add and testdata/fuzz) also run
# as plain tests in every `go test`. Each target sits in a package whose test
# binary links only what it fuzzes (no Temporal server, no k8s.io): -fuzz
# instruments the whole binary, so a cold run would compile that twice.
FUZZ_TARGETS := ./api/request:FuzzDecodeRequests ./api/wire:FuzzReadUpload ./storage/catalogcsv:FuzzCSVImport \
	./storage/catalogcsv:FuzzParseCSVRow ./storage/orderref:FuzzOrderRef ./storage/theme:FuzzValidateDocument \
	./internal/webhook:FuzzCheckURL ./storage/handle:FuzzFromTitle ./storage/richtext:FuzzCheck
FUZZTIME  ?= 500x
FUZZ_LONG ?= 2m
define run-fuzz
	@for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} ($(1))"; \
		go test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(1) "$${t%%:*}" || exit 1; \
	done
endef

## dev: run everything locally (Postgres, Temporal + UI, MinIO, API, worker).
dev: deps build
	$(BIN_DIR)/svc dev

## test: the whole suite on throwaway Postgres, Temporal and MinIO.
# deps installed the npm packages, so the node checks may not skip here.
test: export SVC_REQUIRE_NODE := 1
test: deps
	go build ./...
	go vet ./...
	go tool workflowcheck ./workflows/...
	go run ./cmd/svc testenv -- go test $(GO_TEST_FLAGS) ./...
	$(call run-fuzz,$(FUZZTIME))

## fuzz: every fuzz target for FUZZ_LONG each (new findings land in testdata/fuzz).
fuzz:
	$(call run-fuzz,$(FUZZ_LONG))

## record-histories: run every workflow on the real stack and write its
## history to workflows/testdata/histories/current (the replay tests read it).
record-histories: deps
	go run ./cmd/svc testenv -- env SVC_RECORD_HISTORIES=$(CURDIR)/workflows/testdata/histories/current \
		go test -count=1 -run TestRecordWorkflowHistories ./api/

## bench: every benchmark of docs/benchmarks.md; SUITE narrows it to one
## (catalog, webhooks, images, import, orders, proofs, tracing, fulfillment, pricing, giftcards, analytics, card, content, invoices;
## growth, load and soak run only when named):
## `make bench SUITE=fulfillment`.
SUITE ?= all
bench: deps
	go run ./cmd/svc testenv -- go run ./cmd/bench -suite $(SUITE) -out docs/benchmarks.md

build: system-libs
	go build -o $(BIN_DIR)/svc ./cmd/svc

## deps: everything the build and the tests need that Go modules do not bring.
deps: minio stripe-mock postgres-check system-libs npm-packages

## npm-packages: the npm packages the API's tests run with node, each
## directory's pinned package-lock.json installed by `npm ci` into its
## gitignored node_modules (again only when the lock file changes):
## Redocly CLI, which lints the served OpenAPI document beside kin-openapi
## (TestOpenAPIDocumentPassesRedocly), and openapi-typescript, openapi-fetch
## and TypeScript for the TypeScript client's flow. They live under
## api/testdata, which the go command never walks into.
NPM_PACKAGE_DIRS := api/testdata/openapi-lint api/testdata/tsclient
.PHONY: npm-packages
npm-packages: $(addsuffix /node_modules/.package-lock.json,$(NPM_PACKAGE_DIRS))

%/node_modules/.package-lock.json: %/package-lock.json %/package.json
	@command -v npm >/dev/null || { echo "npm not found: install Node.js 20.19 or later with npm"; exit 1; }
	npm ci --prefix $* --no-audit --no-fund
	@touch $@

## system-libs: libvips (the image pipeline, through cgo), cwebp (the image
## benchmark's baseline), chromium (the OAuth browser test, the merchant pages'
## tests and waybill printing), poppler-utils (the waybill tests read PDFs with
## pdftotext, pdfinfo and pdftoppm) and fonts-noto-core (Noto Naskh Arabic for
## waybills), from Debian's packages when missing.
SYSTEM_PACKAGES = libvips-dev webp pkg-config chromium poppler-utils fonts-noto-core
system-libs:
	@if ! pkg-config --exists vips 2>/dev/null || ! command -v cwebp >/dev/null || ! command -v chromium >/dev/null \
		|| ! command -v pdftotext >/dev/null || ! command -v pdftoppm >/dev/null || ! fc-list 2>/dev/null | grep -q "Noto Naskh Arabic"; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing $(SYSTEM_PACKAGES)"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(SYSTEM_PACKAGES) >/dev/null; \
		else \
			echo "missing system packages: install $(SYSTEM_PACKAGES)"; exit 1; \
		fi; \
	fi

## load: the mixed workload (reads, order creates, webhook fan-out) for a fixed
## time, reported in docs/benchmarks.md with its bare baselines.
load: deps
	go run ./cmd/svc testenv -- go run ./cmd/bench -suite load -out docs/benchmarks.md

## soak: the load mix for SOAK_DURATION (10 minutes): 5xx must be 0, memory and
## goroutines may not grow past their bounds, the outbox must drain; the
## figures go to docs/reliability.md.
SOAK_DURATION ?= 10m
soak: deps
	go run ./cmd/svc testenv -- go run ./cmd/bench -suite soak -soak-duration $(SOAK_DURATION) -out docs/reliability.md

## minio: the pinned MinIO server, built once into .bin (about 10 minutes cold).
minio: $(MINIO_BIN)

$(MINIO_BIN):
	@echo "building MinIO $(MINIO_VERSION) into $(dir $@) (first time only; several minutes)"
	GOBIN=$(dir $@) GOFLAGS=-buildvcs=false go install github.com/minio/minio@$(MINIO_VERSION)

## stripe-mock: the pinned stripe-mock (Stripe's API from its OpenAPI
## fixtures), built once into .bin (under a minute).
stripe-mock: $(STRIPE_MOCK_BIN)

$(STRIPE_MOCK_BIN):
	GOBIN=$(dir $@) GOFLAGS=-buildvcs=false go install github.com/stripe/stripe-mock@$(STRIPE_MOCK_VERSION)

## postgres-check: the machine's PostgreSQL server binaries, installed when missing.
postgres-check:
	@if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 && ! command -v postgres >/dev/null; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing the Debian package postgresql"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
		else \
			echo "PostgreSQL server binaries not found: install the package 'postgresql' (or set SVC_DATABASE_URL)"; exit 1; \
		fi; \
	fi

clean-dev:
	rm -rf .dev
