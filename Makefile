# git codex — see README.md. `make install` puts git-codex on PATH so that
# `git codex ...` works; `make test` is what CI runs.

GO      ?= go
PREFIX  ?= $(shell $(GO) env GOPATH)
BINDIR  ?= $(PREFIX)/bin
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/gitcodex/git-codex/cmd/git-codex/app.version=$(VERSION)
# urfave_cli_no_docs leaves out urfave/cli's markdown and man-page writers
# (and blackfriday, whose package init every run paid for): the shipped
# binary never renders its own docs. Tests and benchmarks build with the
# same tags, so they run the binary that ships.
TAGS    ?= urfave_cli_no_docs

.PHONY: build install test test-short bench lint fmt clean

build:
	$(GO) build -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o bin/git-codex ./cmd/git-codex

install:
	$(GO) build -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BINDIR)/git-codex ./cmd/git-codex
	@echo "installed $(BINDIR)/git-codex; make sure $(BINDIR) is on PATH, then run: git codex help"

# Everything: unit, concurrency, crash and property tests, fuzz seed corpora,
# testscripts (end to end through `git codex`), MCP clients.
test:
	$(GO) vet -tags '$(TAGS)' ./...
	$(GO) test -tags '$(TAGS)' -count=1 -timeout 30m ./...

test-short:
	$(GO) test -tags '$(TAGS)' -count=1 -short ./...

# Benchmarks print their figures; docs/PERFORMANCE.md records them.
bench:
	GIT_CODEX_BUILD_TAGS='$(TAGS)' $(GO) test -tags '$(TAGS)' -run '^$$' -bench . -benchtime 2s -timeout 60m ./...

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	@command -v staticcheck >/dev/null || $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" staticcheck ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
