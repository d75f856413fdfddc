// Importing a fixture's roots with arrow-go's cdata package: schemas
// (ImportCArrowField), arrays (ImportCRecordBatchWithSchema or
// ImportCArrayWithType), streams (ImportCRecordReader) and async device
// streams (async.go); validating what it made (array.ValidateRecordFull,
// array.ValidateFull); releasing it.
package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/arrio"
	"github.com/apache/arrow-go/v18/arrow/cdata"
)

// What one root became in arrow-go.
type item struct {
	index      int
	kind       string // "schema", "batch", "array", "stream"
	schema     *arrow.Schema
	recs       []arrow.RecordBatch // a batch's or a stream's
	arr        arrow.Array         // an array under a schema that is no struct
	reader     arrio.Reader        // a stream's, released with the item
	streamErr  *streamError        // the error a stream gave after its batches
	async      map[string]int64    // the async play's counts (AcdFixtureAsyncCounts)
	violations []string            // what the consumer did against the async protocol
}

type streamError struct {
	Errno   int    `json:"errno"`
	Message string `json:"message"`
}

func (it *item) release() {
	for _, r := range it.recs {
		r.Release()
	}
	it.recs = nil
	if it.arr != nil {
		it.arr.Release()
		it.arr = nil
	}
	if r, ok := it.reader.(interface{ Release() }); ok {
		r.Release()
	}
	it.reader = nil
}

// Runs f, turning a panic of arrow-go's into an error (a refusal by panic is still a refusal).
func guard(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return f()
}

// Imports every root: the items made, the roots arrow-go has no import for,
// the roots it refused (with its error). A schema root is imported once and
// given to every array root that names it. With asCPU, an ArrowDeviceArray on
// the CPU is imported as the ArrowArray it holds. Roots arrow-go did not take
// are released here.
func importRoots(fx *fixture, roots []root, asCPU bool) (items []*item, unsupported, refused []string) {
	fields := map[int]arrow.Field{}
	schemas := map[int]*arrow.Schema{}
	for _, r := range roots {
		if r.kind != kindSchema {
			continue
		}
		struct_ := schemaFormat(r) == "+s"
		err := guard(func() error {
			f, err := cdata.ImportCArrowField((*cdata.CArrowSchema)(r.ptr))
			if err != nil {
				return err
			}
			fields[r.index] = f
			if st, ok := f.Type.(*arrow.StructType); ok && struct_ {
				md := f.Metadata
				schemas[r.index] = arrow.NewSchema(st.Fields(), &md)
			} else {
				schemas[r.index] = arrow.NewSchema([]arrow.Field{f}, nil)
			}
			items = append(items, &item{index: r.index, kind: "schema", schema: schemas[r.index]})
			return nil
		})
		if err != nil {
			refused = append(refused, fmt.Sprintf("root %d (%s): %v", r.index, kindNames[r.kind], err))
		}
	}
	for _, r := range roots {
		var it *item
		var err error
		switch r.kind {
		case kindSchema:
			continue
		case kindArray, kindDeviceArray:
			f, ok := fields[int(r.schemaIndex)]
			if !ok {
				unsupported = append(unsupported, fmt.Sprintf("root %d: an %s without an imported schema root", r.index, kindNames[r.kind]))
				continue
			}
			ptr := r.ptr
			if r.kind == kindDeviceArray {
				if !asCPU {
					unsupported = append(unsupported, fmt.Sprintf("root %d: arrow-go v18's cdata has no import of an ArrowDeviceArray", r.index))
					continue
				}
				if ptr, err = cpuArray(r); err != nil {
					refused = append(refused, err.Error())
					continue
				}
			}
			err = guard(func() error {
				it, err = importArray(r.index, ptr, f, schemas[int(r.schemaIndex)])
				return err
			})
		case kindArrayStream:
			err = guard(func() error {
				it, err = importStream(r)
				return err
			})
		case kindDeviceArrayStream:
			unsupported = append(unsupported, fmt.Sprintf("root %d: arrow-go v18's cdata has no import of an ArrowDeviceArrayStream", r.index))
			continue
		case kindAsyncScript:
			it, err = playAsync(fx, r)
			if err != nil && it != nil {
				it.release()
				items = append(items, &item{index: r.index, kind: "async", async: it.async, violations: it.violations})
				it = nil
			}
		}
		if err != nil {
			refused = append(refused, fmt.Sprintf("root %d (%s): %v", r.index, kindNames[r.kind], err))
		} else if it != nil {
			items = append(items, it)
		}
	}
	var left []int
	for _, r := range roots {
		if holdsRelease(r) && refusedRoot(refused, r.index) {
			left = append(left, r.index)
		}
		releaseRoot(r) // only those still holding their release
	}
	if len(left) > 0 {
		refused = append(refused, fmt.Sprintf("arrow-go refused and did not release root(s) %v (released here)", left))
	}
	return items, unsupported, refused
}

func refusedRoot(refused []string, index int) bool {
	for _, m := range refused {
		if strings.HasPrefix(m, fmt.Sprintf("root %d ", index)) || strings.HasPrefix(m, fmt.Sprintf("root %d:", index)) {
			return true
		}
	}
	return false
}

// An ArrowArray under its schema root: a record batch when the schema is a struct, else an array.
func importArray(index int, ptr unsafe.Pointer, f arrow.Field, schema *arrow.Schema) (*item, error) {
	carr := (*cdata.CArrowArray)(ptr)
	if _, ok := f.Type.(*arrow.StructType); ok { // schema then holds the struct's fields and metadata
		rec, err := cdata.ImportCRecordBatchWithSchema(carr, schema)
		if err != nil {
			return nil, err
		}
		return &item{index: index, kind: "batch", schema: schema, recs: []arrow.RecordBatch{rec}}, nil
	}
	arr, err := cdata.ImportCArrayWithType(carr, f.Type)
	if err != nil {
		return nil, err
	}
	return &item{index: index, kind: "array", schema: schema, arr: arr}, nil
}

// An ArrowArrayStream read to its end or its error.
func importStream(r root) (*item, error) {
	reader, err := cdata.ImportCRecordReader((*cdata.CArrowArrayStream)(r.ptr), nil)
	if err != nil {
		return nil, err
	}
	it := &item{index: r.index, kind: "stream", reader: reader}
	for {
		rec, err := reader.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var errno syscall.Errno
			errors.As(err, &errno)
			it.streamErr = &streamError{Errno: int(errno), Message: err.Error()}
			break
		}
		rec.Retain() // the reader releases its current batch on the next Read
		it.recs = append(it.recs, rec)
	}
	if r, ok := reader.(interface{ Schema() *arrow.Schema }); ok {
		it.schema = r.Schema()
	}
	return it, nil
}

// Validates every batch and array fully: nil, or arrow-go's error.
func validate(items []*item) error {
	for _, it := range items {
		for i, rec := range it.recs {
			if err := guard(func() error { return array.ValidateRecordFull(rec) }); err != nil {
				return fmt.Errorf("root %d batch %d: array.ValidateRecordFull: %w", it.index, i, err)
			}
		}
		if it.arr != nil {
			if err := guard(func() error { return array.ValidateFull(it.arr) }); err != nil {
				return fmt.Errorf("root %d: array.ValidateFull: %w", it.index, err)
			}
		}
	}
	return nil
}
