// The loader's API for the peer (csrc/fixtures/acd_fixture.h through cgo):
// loading an image, its roots, the release counts, and freeing it with its
// report of every struct not released or released twice.
package main

// #cgo CFLAGS: -I${SRCDIR}/../../../csrc -O1
// #include <stdlib.h>
// #include "glue.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// Root kinds (docs/fixtures.md, root table).
const (
	kindSchema            = 1
	kindArray             = 2
	kindDeviceArray       = 3
	kindArrayStream       = 4
	kindDeviceArrayStream = 5
	kindAsyncScript       = 6
	noSchema              = 0xFFFFFFFF
)

var kindNames = map[uint32]string{1: "ArrowSchema", 2: "ArrowArray", 3: "ArrowDeviceArray", 4: "ArrowArrayStream",
	5: "ArrowDeviceArrayStream", 6: "async script"}

type fixture struct{ fx *C.struct_AcdFixture }

type root struct {
	index       int
	kind        uint32
	schemaIndex uint32
	ptr         unsafe.Pointer
}

func loadFixture(path string) (*fixture, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var fx *C.struct_AcdFixture
	var e C.struct_AcdFixtureError
	if code := C.AcdFixtureLoadFile(cpath, &fx, &e); code != 0 {
		return nil, fmt.Errorf("AcdFixtureLoadFile: %s (errno %d)", C.GoString(&e.message[0]), int(code))
	}
	return &fixture{fx: fx}, nil
}

func (f *fixture) roots() []root {
	n := int(C.AcdFixtureRootCount(f.fx))
	out := make([]root, n)
	for i := range out {
		var r C.struct_AcdFixtureRoot
		C.AcdFixtureGetRoot(f.fx, C.uint32_t(i), &r)
		out[i] = root{index: i, kind: uint32(r.kind), schemaIndex: uint32(r.schema_index), ptr: r.ptr}
	}
	return out
}

// The loader's counts (acd_fixture.h, AcdFixtureCounts), by their C names.
func (f *fixture) counts() map[string]int64 {
	var c C.struct_AcdFixtureCounts
	C.PeerLock()
	C.AcdFixtureGetCounts(f.fx, &c)
	C.PeerUnlock()
	return map[string]int64{"release_calls": int64(c.release_calls), "double_releases": int64(c.double_releases),
		"bad_releases": int64(c.bad_releases), "nodes": int64(c.nodes), "nodes_released": int64(c.nodes_released),
		"not_released": int64(c.not_released), "stream_calls": int64(c.stream_calls)}
}

// Frees the fixture: the number of problems and the loader's report.
func (f *fixture) free() (int, string) {
	report := (*C.char)(C.calloc(4096, 1))
	defer C.free(unsafe.Pointer(report))
	C.PeerLock()
	problems := int(C.AcdFixtureFree(f.fx, report, 4096))
	C.PeerUnlock()
	f.fx = nil
	return problems, C.GoString(report)
}

// Releases a root that the peer did not hand to arrow-go, or that arrow-go refused without taking.
func releaseRoot(r root) bool {
	C.PeerLock()
	defer C.PeerUnlock()
	return C.PeerReleaseRoot(C.uint32_t(r.kind), r.ptr) != 0
}

func holdsRelease(r root) bool { return C.PeerHoldsRelease(C.uint32_t(r.kind), r.ptr) != 0 }

// The CPU array inside an ArrowDeviceArray root, or why the peer cannot hand it to a CPU import.
func cpuArray(r root) (unsafe.Pointer, error) {
	d := (*C.struct_ArrowDeviceArray)(r.ptr)
	if d.device_type != C.ARROW_DEVICE_CPU || d.sync_event != nil {
		return nil, fmt.Errorf("the peer cannot import root %d as a CPU array: an ArrowDeviceArray on device type %d (id %d, sync_event %v)",
			r.index, int(d.device_type), int64(d.device_id), d.sync_event != nil)
	}
	return unsafe.Pointer(&d.array), nil
}

// The format string of an ArrowSchema root.
func schemaFormat(r root) string { return C.GoString((*C.struct_ArrowSchema)(r.ptr).format) }
