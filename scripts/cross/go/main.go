// The arrow-go peer of the conformance matrix (issue 12; docs/conformance.md):
// loads every LP64 fixture image of a corpus through the portable C loader
// (csrc/fixtures/, compiled in by cgo), imports its roots with arrow-go's
// cdata package, validates them fully, compares them with the case's expected
// values, and checks through the loader that arrow-go called every release
// exactly once. Built by setup.sh into build/go-cross/:
//
//	build/go-cross/peer_arrow_go CORPUS_DIR
//
// CORPUS_DIR is what `arrow-c-device fixtures --out DIR --layout lp64` writes.
// Prints one JSON object per case, in the manifest's order, with the fields of
// scripts/cross/peer_pyarrow.py:
//
//	{"case", "outcome": "accepted" | "refused" | "unsupported" | "violation" | "load-error",
//	 "equal": true | false | null, "message", "releases": {...}, "problems",
//	 "report", "expected", "stream_error"?, "async"?, "as_cpu_array"?}
//
// "refused": arrow-go returned an error (or panicked) importing or validating
// (message: root by root; the other roots are still imported). "unsupported":
// arrow-go has no import for the case's roots (ArrowDeviceArray,
// ArrowDeviceArrayStream). "violation": imported, but arrow-go broke the async
// protocol (message: how). "equal": whether the values equal the expected
// file (also when only arrow-go's validation refused them); null when not
// compared (a negative fixture, "invalid" in the manifest, never is: it must
// be refused). "expected": the file compared with. "stream_error": the
// errno and message a stream gave after its batches. "async": the loader's
// counts of an async play. "as_cpu_array": a case of ArrowDeviceArrays
// imported again, each as the ArrowArray it holds (after the peer checked it
// is on the CPU), as arrow-go's own async consumer does. "problems": what the
// loader's AcdFixtureFree found (structs not released, or released twice).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

type manifestCase struct {
	Name   string            `json:"name"`
	Images map[string]string `json:"images"`
	// A negative fixture: to be refused; nothing to compare.
	Invalid bool `json:"invalid"`
	Roots   []struct {
		Kind string `json:"kind"`
	} `json:"roots"`
	Expected struct {
		IPC  string `json:"ipc"`
		JSON string `json:"json"`
	} `json:"expected"`
}

func (c manifestCase) hasDeviceArray() bool {
	for _, r := range c.Roots {
		if r.Kind == "ArrowDeviceArray" {
			return true
		}
	}
	return false
}

type retry struct {
	Outcome  string  `json:"outcome"`
	Equal    *bool   `json:"equal"`
	Message  *string `json:"message"`
	Problems int     `json:"problems"`
}

type result struct {
	AsCPUArray  *retry           `json:"as_cpu_array,omitempty"`
	Async       map[string]int64 `json:"async,omitempty"`
	Case        string           `json:"case"`
	Equal       *bool            `json:"equal"`
	Expected    *string          `json:"expected"`
	Message     *string          `json:"message"`
	Outcome     string           `json:"outcome"`
	Problems    int              `json:"problems"`
	Releases    map[string]int64 `json:"releases"`
	Report      string           `json:"report"`
	StreamError *streamError     `json:"stream_error,omitempty"`
}

func text(parts []string) *string {
	if len(parts) == 0 {
		return nil
	}
	s := strings.Join(parts, "; ")
	return &s
}

func runCase(name, image string, want *expected, wantErr error, asCPU, invalid bool) result {
	res := result{Case: name}
	fx, err := loadFixture(image)
	if err != nil {
		res.Outcome, res.Message = "load-error", text([]string{err.Error()})
		return res
	}
	all, unsupported, refused := importRoots(fx, fx.roots(), asCPU)
	imported := len(refused) == 0
	var items []*item // what holds data or a schema (not a play that failed)
	var violations []string
	for _, it := range all {
		violations = append(violations, it.violations...)
		if it.async != nil {
			res.Async = it.async
		}
		if it.streamErr != nil {
			res.StreamError = it.streamErr
		}
		if it.kind != "async" {
			items = append(items, it)
		}
	}
	if err := validate(items); err != nil {
		refused = append(refused, err.Error())
	}
	var notes []string
	if !invalid && (len(refused) == 0 || imported) {
		// Compared also when only arrow-go's validation refused: whether what it imported is right.
		if wantErr != nil {
			notes = append(notes, "unreadable expected values: "+wantErr.Error())
		} else {
			equal, why := compare(items, want)
			res.Equal = equal
			if why != "" {
				notes = append(notes, why)
			}
			if want != nil {
				res.Expected = &want.source
			}
		}
	}
	switch {
	case len(refused) > 0:
		res.Outcome, res.Message = "refused", text(append(append(refused, violations...), notes...))
	case len(unsupported) > 0 && len(items) <= countSchemas(items):
		res.Outcome, res.Message, res.Equal, res.Expected = "unsupported", text(unsupported), nil, nil
	case len(violations) > 0:
		res.Outcome, res.Message = "violation", text(append(append(violations, unsupported...), notes...))
	default:
		res.Outcome, res.Message = "accepted", text(append(unsupported, notes...))
	}
	for _, it := range all {
		it.release()
	}
	runtime.GC()
	res.Releases = fx.counts()
	if n := res.Releases["not_released"]; n > 0 {
		// arrow-go still holds views of the image: freeing it would pull the memory from under them.
		res.Problems, res.Report = int(n), fmt.Sprintf("%d structs not released: the image is leaked, not freed", n)
		return res
	}
	res.Problems, res.Report = fx.free()
	return res
}

func countSchemas(items []*item) int {
	n := 0
	for _, it := range items {
		if it.kind == "schema" {
			n++
		}
	}
	return n
}

func main() {
	dump := len(os.Args) == 4 && os.Args[1] == "dump"
	if len(os.Args) != 2 && !dump {
		fmt.Fprintln(os.Stderr, "usage: peer_arrow_go CORPUS_DIR (written by `arrow-c-device fixtures --out DIR --layout lp64`)\n       peer_arrow_go dump OUT_DIR CORPUS_DIR (dump.go)")
		os.Exit(2)
	}
	corpus := os.Args[1]
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "peer_arrow_go:", err)
		os.Exit(1)
	}
	jsonTool := filepath.Join(filepath.Dir(self), "arrow-json-integration-test")
	if dump {
		if err := runDump(os.Args[2], os.Args[3], jsonTool); err != nil {
			fmt.Fprintln(os.Stderr, "peer_arrow_go dump:", err)
			os.Exit(1)
		}
		return
	}
	raw, err := os.ReadFile(filepath.Join(corpus, "manifest.json"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "peer_arrow_go:", err)
		os.Exit(1)
	}
	var manifest struct {
		Cases []manifestCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		fmt.Fprintln(os.Stderr, "peer_arrow_go: manifest.json:", err)
		os.Exit(1)
	}
	out := json.NewEncoder(os.Stdout)
	for _, c := range manifest.Cases {
		image, ok := c.Images["lp64"]
		if !ok {
			continue // a case without an LP64 image
		}
		var want *expected
		var wantErr error
		if !c.Invalid {
			want, wantErr = readExpected(corpus, c, jsonTool)
		}
		res := runCase(c.Name, filepath.Join(corpus, image), want, wantErr, false, c.Invalid)
		if res.Outcome == "unsupported" && c.hasDeviceArray() {
			again := runCase(c.Name, filepath.Join(corpus, image), want, wantErr, true, c.Invalid)
			res.AsCPUArray = &retry{Outcome: again.Outcome, Equal: again.Equal, Message: again.Message, Problems: again.Problems}
		}
		if want != nil {
			want.release()
		}
		if err := out.Encode(res); err != nil {
			fmt.Fprintln(os.Stderr, "peer_arrow_go:", err)
			os.Exit(1)
		}
	}
}
