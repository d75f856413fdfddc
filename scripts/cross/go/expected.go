// A case's expected values, read by arrow-go: its IPC stream (ipc.NewReader),
// or, where the corpus has none, its integration JSON converted to an IPC
// file by arrow-go's own arrow-json-integration-test (JSON_TO_ARROW; arrow-go's
// JSON reader is an internal package), then ipc.NewFileReader. And the
// comparison of what arrow-go imported with them.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

type expected struct {
	schema *arrow.Schema
	recs   []arrow.RecordBatch
	source string // which file, as the manifest names it
}

func (e *expected) release() {
	for _, r := range e.recs {
		r.Release()
	}
}

type batchReader interface {
	Schema() *arrow.Schema
	Next() bool
	RecordBatch() arrow.RecordBatch
	Err() error
}

func readAll(r batchReader) (*arrow.Schema, []arrow.RecordBatch, error) {
	var recs []arrow.RecordBatch
	for r.Next() {
		rec := r.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	return r.Schema(), recs, r.Err()
}

// The expected values of a case; jsonTool is the path of arrow-json-integration-test.
func readExpected(corpus string, c manifestCase, jsonTool string) (*expected, error) {
	if c.Expected.IPC != "" {
		f, err := os.Open(filepath.Join(corpus, c.Expected.IPC))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r, err := ipc.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: ipc.NewReader: %w", c.Expected.IPC, err)
		}
		defer r.Release()
		schema, recs, err := readAll(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Expected.IPC, err)
		}
		return &expected{schema: schema, recs: recs, source: c.Expected.IPC}, nil
	}
	if c.Expected.JSON == "" {
		return nil, nil
	}
	tmp, err := os.MkdirTemp("", "peer-arrow-go-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, "expected.arrow")
	text, err := os.ReadFile(filepath.Join(corpus, c.Expected.JSON))
	if err != nil {
		return nil, err
	}
	source := filepath.Join(tmp, "expected.json")
	if err := os.WriteFile(source, surrogatesToPrivate(text), 0o644); err != nil {
		return nil, err
	}
	out, err := exec.Command(jsonTool, "-mode", "JSON_TO_ARROW", "-verbose=false", "-json", source, "-arrow", file).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s: arrow-json-integration-test JSON_TO_ARROW: %v: %s", c.Expected.JSON, err, strings.TrimSpace(string(out)))
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s (converted): ipc.NewFileReader: %w", c.Expected.JSON, err)
	}
	defer r.Close()
	var recs []arrow.RecordBatch
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatch(i)
		if err != nil {
			return nil, fmt.Errorf("%s (converted): batch %d: %w", c.Expected.JSON, i, err)
		}
		rec.Retain()
		recs = append(recs, rec)
	}
	schema := privateToBytesSchema(r.Schema())
	for i, rec := range recs {
		recs[i] = array.NewRecordBatch(schema, rec.Columns(), rec.NumRows())
		rec.Release()
	}
	return &expected{schema: schema, recs: recs, source: c.Expected.JSON + " (read by arrow-json-integration-test)"}, nil
}

// Metadata bytes that are not UTF-8 are the lone surrogates U+DC80..U+DCFF in
// the integration JSON (docs/fixtures.md, PEP 383), which Go's JSON decoder
// turns into U+FFFD. They are carried through it as U+F780..U+F7FF (private
// use) and turned back into the bytes in the schema's and its top-level
// fields' metadata (where the corpus has them).
func surrogatesToPrivate(text []byte) []byte {
	out := make([]byte, 0, len(text))
	for i := 0; i < len(text); i++ {
		if text[i] != '\\' || i+1 >= len(text) {
			out = append(out, text[i])
			continue
		}
		if text[i+1] == 'u' && i+6 <= len(text) {
			esc := strings.ToLower(string(text[i+2 : i+6]))
			if strings.HasPrefix(esc, "dc") && strings.ContainsRune("89abcdef", rune(esc[2])) {
				out = append(out, `\uf7`+esc[2:]...)
				i += 5
				continue
			}
		}
		out = append(out, text[i], text[i+1]) // an escape: its second character is never the start of one
		i++
	}
	return out
}

func privateToBytes(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r >= 0xF780 && r <= 0xF7FF }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r >= 0xF780 && r <= 0xF7FF {
			b.WriteByte(byte(r - 0xF700))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func privateToBytesMetadata(md arrow.Metadata) arrow.Metadata {
	keys, values := md.Keys(), md.Values()
	if len(keys) == 0 {
		return md
	}
	k2, v2 := make([]string, len(keys)), make([]string, len(values))
	for i := range keys {
		k2[i], v2[i] = privateToBytes(keys[i]), privateToBytes(values[i])
	}
	return arrow.NewMetadata(k2, v2)
}

func privateToBytesSchema(schema *arrow.Schema) *arrow.Schema {
	fields := schema.Fields()
	for i := range fields {
		if fields[i].HasMetadata() {
			fields[i].Metadata = privateToBytesMetadata(fields[i].Metadata)
		}
	}
	md := privateToBytesMetadata(schema.Metadata())
	return arrow.NewSchema(fields, &md)
}

func schemaEqual(a, b *arrow.Schema) bool {
	return a.Equal(b) && a.Metadata().Equal(b.Metadata())
}

// Whether what an item holds equals the expected values: "" when equal, else what differs.
func compareItem(it *item, want *expected) string {
	got := it.recs
	schema := it.schema
	if it.kind == "array" {
		rec := array.NewRecordBatch(want.schema, []arrow.Array{it.arr}, int64(it.arr.Len()))
		defer rec.Release()
		got, schema = []arrow.RecordBatch{rec}, want.schema
		if want.schema.NumFields() != 1 || !arrow.TypeEqual(it.arr.DataType(), want.schema.Field(0).Type, arrow.CheckMetadata()) {
			return fmt.Sprintf("type differs: got %s, expected %s", it.arr.DataType(), want.schema)
		}
	}
	if !schemaEqual(schema, want.schema) {
		return fmt.Sprintf("schema differs: got %s, expected %s", schema, want.schema)
	}
	if it.kind == "schema" {
		return ""
	}
	have := array.NewTableFromRecords(schema, got)
	defer have.Release()
	need := array.NewTableFromRecords(want.schema, want.recs)
	defer need.Release()
	if !array.TableEqual(have, need) {
		return fmt.Sprintf("values differ: got %s, expected %s", describe(got), describe(want.recs))
	}
	return ""
}

func describe(recs []arrow.RecordBatch) string {
	var parts []string
	for _, r := range recs {
		for i, col := range r.Columns() {
			parts = append(parts, fmt.Sprintf("%s=%v", r.ColumnName(i), col))
		}
	}
	s := "[" + strings.Join(parts, "; ") + "]"
	if len(s) > 600 {
		s = s[:600] + "..."
	}
	return s
}

// Whether every item equals the expected values (nil without them), and the first difference.
func compare(items []*item, want *expected) (*bool, string) {
	if want == nil {
		return nil, "no comparable expected file"
	}
	for _, it := range items {
		if why := compareItem(it, want); why != "" {
			f := false
			return &f, fmt.Sprintf("root %d (%s) against %s: %s", it.index, it.kind, want.source, why)
		}
	}
	t := true
	return &t, ""
}
