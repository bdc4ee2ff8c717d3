package svc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The layers of the service and the one way their imports run (of this
// module's packages; the standard library and modules are free). Only a
// package's own imports are read: its tests may wire the whole stack.
//
//	layer          imports of ours
//	cmd/*          anything
//	api, api/*     api/*, storage/*, workflows (start and query), internal/*
//	worker         workflows, activities, storage/*, internal/*
//	workflows      activities (types and method references)
//	activities/*   activities/*, storage/*, internal/*
//	internal/*     internal/*, storage/*
//	storage/*      storage/* only
//
// layering is what the build enforces of that picture: what each layer must
// not import, and why. A pattern is a path inside the module, "x/..." being
// x and every package under it, and "..." the whole module.
var layering = []struct {
	from          string
	mustNotImport []string
	except        string // what mustNotImport leaves allowed
	why           string
}{
	{"api/...", []string{"activities/..."}, "",
		"the API starts and queries workflows; their side effects run in the worker"},
	{"workflows/...", []string{"storage/..."}, "",
		"workflows are deterministic orchestration without I/O: they reach data through activities"},
	{"storage/...", []string{"..."}, "storage/...",
		"storage is the domain and imports nothing else of ours"},
	{"activities/...", []string{"api/...", "workflows/..."}, "",
		"activities are the side effects workflows call; workflows import them, not the other way"},
	{"internal/...", []string{"workflows/...", "api/..."}, "",
		"internal packages are parts the layers share; what they need of a layer, their callers hand them"},
}

// matches says whether path, relative to the module ("" for its root),
// is pattern or, for "x/...", under x ("..." alone is the whole module).
func matches(path, pattern string) bool {
	if pattern == "..." {
		return true
	}
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == dir || strings.HasPrefix(path, dir+"/")
	}
	return path == pattern
}

// describe names a forbidden pattern and its exception for a message.
func describe(forbidden, except string) string {
	if forbidden == "..." {
		forbidden = "anything of this module"
	}
	if except != "" {
		forbidden += " but " + except
	}
	return forbidden
}

// listedPackage is what `go list -json` says of a package that the rules
// read.
type listedPackage struct {
	ImportPath string
	Imports    []string // not TestImports nor XTestImports
	Module     *struct{ Path string }
}

// modulePackages lists every package of the module with its imports.
func modulePackages(t *testing.T) []listedPackage {
	t.Helper()
	var stdout, stderr bytes.Buffer
	list := exec.Command("go", "list", "-json=ImportPath,Imports,Module", "./...")
	list.Stdout, list.Stderr = &stdout, &stderr
	if err := list.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []listedPackage
	for dec := json.NewDecoder(&stdout); ; {
		var p listedPackage
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			return pkgs
		}
		if err != nil {
			t.Fatalf("read go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
}

// watchSources makes go test's cache depend on the module's Go files: the
// imports are read by `go list`, whose reads go test does not see, so a pass
// cached before a forbidden import was added would hide it. go test hashes
// the directories a test lists and the files it stats.
func watchSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata"):
			return filepath.SkipDir
		case !d.IsDir() && (strings.HasSuffix(path, ".go") || path == "go.mod"):
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatalf("walk the module: %v", err)
	}
}

// Every package imports only what the layering lets it: a forbidden import
// fails the build (make test runs this test), naming the package, the
// import and the rule it breaks.
func TestLayering(t *testing.T) {
	watchSources(t)
	pkgs := modulePackages(t)
	if len(pkgs) == 0 || pkgs[0].Module == nil {
		t.Fatal("go list found no package of the module")
	}
	module := pkgs[0].Module.Path
	inModule := func(importPath string) (string, bool) {
		if importPath == module {
			return "", true
		}
		return strings.CutPrefix(importPath, module+"/")
	}
	seen := make([]bool, len(layering))
	for _, p := range pkgs {
		from, _ := inModule(p.ImportPath)
		for i, rule := range layering {
			if !matches(from, rule.from) {
				continue
			}
			seen[i] = true
			for _, imp := range p.Imports {
				to, ours := inModule(imp)
				if !ours || rule.except != "" && matches(to, rule.except) {
					continue
				}
				for _, forbidden := range rule.mustNotImport {
					if matches(to, forbidden) {
						t.Errorf("%s imports %s, but %s must not import %s (%s)", p.ImportPath, imp, rule.from, describe(forbidden, rule.except), rule.why)
					}
				}
			}
		}
	}
	// A rule whose layer has no package left (renamed, moved) checks nothing.
	for i, rule := range layering {
		if !seen[i] {
			t.Errorf("no package is in %s: the rule on it checks nothing (was the layer renamed?)", rule.from)
		}
	}
}
