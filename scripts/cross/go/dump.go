// The dump mode of the arrow-go peer (docs/conformance.md, "Peers' exports,
// dumped"): each valid case's expected values, read by arrow-go, exported
// through arrow-go's own cdata exporter (ExportArrowRecordBatch for a batch,
// ExportRecordReader for a stream, one that fails after its batches for a
// failing case) and written into a fixture image by the C core's dumper
// (csrc/fixtures/acd_dump.h; setup.sh links the native core library):
//
//	build/go-cross/peer_arrow_go dump OUT_DIR CORPUS_DIR
//
// writes OUT_DIR/<case>.acdfix and prints one JSON object per case, as
// scripts/cross/peer_dump.py does: {"peer": "arrow-go", "case", "root",
// "outcome": "dumped" | "refused" | "export-error" | "unsupported",
// "message", "source"}. arrow-go has no exporter of ArrowDeviceArray (only of
// async device streams): the -device twins are "unsupported".
package main

// #cgo CFLAGS: -I${SRCDIR}/../../../csrc -O1
// #include <stdio.h>
// #include <stdlib.h>
// #include "fixtures/acd_dump.h"
//
// // kind 1: a batch (a: schema, b: array); kind 4: a stream (a). 0 or errno, with message.
// static int PeerDump(int kind, void* a, void* b, const char* path, char* message, size_t size) {
//   struct AcdDump* d = NULL;
//   struct AcdError e;
//   e.message[0] = '\0';
//   int code = AcdDumpNew(&d, &e);
//   if (code == 0 && kind == 1) code = AcdDumpAddBatch(d, a, b, ACD_VALIDATION_FULL, NULL, &e);
//   else if (code == 0) code = AcdDumpAddArrayStream(d, a, ACD_VALIDATION_FULL, NULL, &e);
//   if (code == 0) code = AcdDumpWriteFile(d, path, &e);
//   AcdDumpFree(d);
//   if (code != 0) snprintf(message, size, "%s", e.message);
//   return code;
// }
// static void PeerReleaseSchema(struct ArrowSchema* s) { if (s->release != NULL) s->release(s); }
// static void PeerReleaseArray(struct ArrowArray* a) { if (a->release != NULL) a->release(a); }
// static void PeerReleaseStream(struct ArrowArrayStream* s) { if (s->release != NULL) s->release(s); }
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"
)

type dumpResult struct {
	Case    string  `json:"case"`
	Message *string `json:"message"`
	Outcome string  `json:"outcome"`
	Peer    string  `json:"peer"`
	Root    string  `json:"root"`
	Source  *string `json:"source"`
}

// A reader of the batches that then fails with the case's message (arrow-go
// gives EIO for any error of a reader).
type failingReader struct {
	array.RecordReader
	message string
	err     error
}

func (r *failingReader) Next() bool {
	if r.RecordReader.Next() {
		return true
	}
	r.err = errors.New(r.message)
	return false
}

func (r *failingReader) Err() error { return r.err }

type dumpCase struct {
	manifestCase
	Roots []struct {
		Kind    string `json:"kind"`
		FailAt  *int64 `json:"fail_at"`
		Message string `json:"message"`
	} `json:"roots"`
}

func dumpWith(kind int, a, b unsafe.Pointer, path string) (int, string) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	message := (*C.char)(C.calloc(1024, 1))
	defer C.free(unsafe.Pointer(message))
	code := int(C.PeerDump(C.int(kind), a, b, cpath, message, 1024))
	return code, C.GoString(message)
}

// One case: the export, the dump, the release of what the dumper did not take.
func dumpOne(c dumpCase, want *expected, path string) (res dumpResult) {
	res = dumpResult{Case: c.Name, Peer: "arrow-go", Root: "batch"}
	if len(c.Roots) == 1 {
		res.Root = "stream"
	} else if len(c.Roots) == 2 && c.Roots[1].Kind == "ArrowDeviceArray" {
		res.Root = "device"
		res.Outcome = "unsupported"
		res.Message = text([]string{"arrow-go has no exporter of ArrowDeviceArray (cdata exports async device streams only)"})
		return res
	}
	res.Source = &want.source
	defer func() {
		if p := recover(); p != nil {
			res.Outcome = "export-error"
			res.Message = text([]string{fmt.Sprintf("panic: %v", p)})
		}
	}()
	var code int
	var message string
	if res.Root == "stream" {
		stream := (*C.struct_ArrowArrayStream)(C.calloc(1, C.sizeof_struct_ArrowArrayStream))
		defer C.free(unsafe.Pointer(stream))
		rdr, err := array.NewRecordReader(want.schema, want.recs)
		if err != nil {
			res.Outcome, res.Message = "export-error", text([]string{err.Error()})
			return res
		}
		var reader array.RecordReader = rdr
		if r := c.Roots[0]; r.FailAt != nil && *r.FailAt >= 0 {
			reader = &failingReader{RecordReader: rdr, message: r.Message}
		}
		cdata.ExportRecordReader(reader, (*cdata.CArrowArrayStream)(unsafe.Pointer(stream)))
		rdr.Release()
		code, message = dumpWith(4, unsafe.Pointer(stream), nil, path)
		C.PeerReleaseStream(stream)
	} else {
		schema := (*C.struct_ArrowSchema)(C.calloc(1, C.sizeof_struct_ArrowSchema))
		arr := (*C.struct_ArrowArray)(C.calloc(1, C.sizeof_struct_ArrowArray))
		defer C.free(unsafe.Pointer(schema))
		defer C.free(unsafe.Pointer(arr))
		if len(want.recs) != 1 {
			res.Outcome, res.Message = "export-error", text([]string{fmt.Sprintf("%d batches read, expected 1", len(want.recs))})
			return res
		}
		cdata.ExportArrowRecordBatch(want.recs[0], (*cdata.CArrowArray)(unsafe.Pointer(arr)), (*cdata.CArrowSchema)(unsafe.Pointer(schema)))
		code, message = dumpWith(1, unsafe.Pointer(schema), unsafe.Pointer(arr), path)
		C.PeerReleaseArray(arr)
		C.PeerReleaseSchema(schema)
	}
	if code != 0 {
		res.Outcome, res.Message = "refused", text([]string{message})
	} else {
		res.Outcome = "dumped"
	}
	return res
}

// peer_arrow_go dump OUT_DIR CORPUS_DIR
func runDump(out, corpus, jsonTool string) error {
	raw, err := os.ReadFile(filepath.Join(corpus, "manifest.json"))
	if err != nil {
		return err
	}
	var manifest struct {
		Cases []dumpCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		return fmt.Errorf("manifest.json: %w", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	for _, c := range manifest.Cases {
		if c.Invalid {
			continue
		}
		want, err := readExpected(corpus, c.manifestCase, jsonTool)
		var res dumpResult
		if err != nil || want == nil {
			why := "no expected values"
			if err != nil {
				why = err.Error()
			}
			res = dumpResult{Case: c.Name, Peer: "arrow-go", Root: "batch", Outcome: "export-error", Message: text([]string{why})}
		} else {
			res = dumpOne(c, want, filepath.Join(out, c.Name+".acdfix"))
			want.release()
		}
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	return nil
}
