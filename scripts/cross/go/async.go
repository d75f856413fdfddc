// The async device stream: the loader plays a script (root kind 6) as the
// producer into arrow-go's consumer, cdata.CreateAsyncDeviceStreamHandler.
// The loader's pump runs on its own goroutine (glue.c, PeerAsyncRun);
// arrow-go's handler imports each batch on its goroutine and hands it to this
// one through a channel. glue.c serialises the calls into the loader.
package main

// #include <stdlib.h>
// #include "glue.h"
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/cdata"
)

// Two: a stream of three batches then needs arrow-go's request(1) after each task it takes.
const asyncQueueSize = 2

const asyncDeadline = 30 * time.Second

// Plays async root r into arrow-go's handler. The item holds the batches and
// the error arrow-go's stream gave; its violations what arrow-go did against
// the protocol (the loader's report, and calls on the producer after the
// handler's release). err: the play could not be done (no schema, a stall).
func playAsync(fx *fixture, r root) (*item, error) {
	size := C.size_t(unsafe.Sizeof(C.struct_ArrowAsyncDeviceStreamHandler{}))
	handler := (*C.struct_ArrowAsyncDeviceStreamHandler)(C.calloc(1, size))
	defer C.free(unsafe.Pointer(handler))
	ctx, cancel := context.WithTimeout(context.Background(), asyncDeadline)
	defer cancel()
	streams := cdata.CreateAsyncDeviceStreamHandler(ctx, asyncQueueSize, (*cdata.CArrowAsyncDeviceStreamHandler)(unsafe.Pointer(handler)))
	play := C.PeerAsyncNew(fx.fx, C.uint32_t(r.index), handler)
	if play == nil {
		return nil, errors.New("out of memory")
	}
	pumped := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // the glue tells the pump's thread from arrow-go's
		defer runtime.UnlockOSThread()
		message := (*C.char)(C.calloc(512, 1))
		defer C.free(unsafe.Pointer(message))
		if C.PeerAsyncRun(play, C.int(asyncDeadline/time.Second), message, 512) != 0 {
			pumped <- errors.New(C.GoString(message))
		} else {
			pumped <- nil
		}
	}()

	it := &item{index: r.index, kind: "stream"}
	var err error
	select {
	case s, ok := <-streams:
		switch {
		case !ok:
			err = errors.New("arrow-go's handler closed its channel without a schema")
		case s.Err != nil:
			err = fmt.Errorf("before the schema: %w", s.Err)
		default:
			it.schema = s.Schema
			it.recs, it.streamErr = drain(s.Stream)
		}
	case err = <-pumped:
		pumped <- err
		if err == nil {
			err = errors.New("the play ended before arrow-go's handler gave a schema")
		}
	}
	if perr := <-pumped; perr != nil && err == nil {
		err = perr
	}
	var counts C.struct_AcdFixtureAsyncCounts
	var afterRelease C.int64_t
	C.PeerAsyncCounts(play, &counts, &afterRelease)
	it.async = map[string]int64{"requested": int64(counts.requested), "request_calls": int64(counts.request_calls),
		"cancel_calls": int64(counts.cancel_calls), "tasks": int64(counts.tasks), "extracted": int64(counts.extracted),
		"extracted_null": int64(counts.extracted_null), "ends": int64(counts.ends), "errors": int64(counts.errors),
		"handler_releases": int64(counts.handler_releases), "violations": int64(counts.violations),
		"calls_after_release": int64(afterRelease)}
	if afterRelease > 0 {
		it.violations = append(it.violations, fmt.Sprintf("root %d: arrow-go called the producer's request or cancel %d time(s) after the handler's release", r.index, int64(afterRelease)))
	}
	if C.PeerAsyncReleaseWithheld(play) != 0 {
		it.violations = append(it.violations, fmt.Sprintf("root %d: arrow-go's on_schema refused the stream (%v) and left its handler's release set over the state it had freed; "+
			"the peer did not call that release, which panics (misuse of an invalid Handle)", r.index, err))
	}
	report := (*C.char)(C.calloc(4096, 1))
	defer C.free(unsafe.Pointer(report))
	if C.PeerAsyncFree(play, report, 4096) != 0 {
		it.violations = append(it.violations, fmt.Sprintf("root %d: the loader's report: %s", r.index, strings.TrimSpace(C.GoString(report))))
	}
	return it, err
}

// The batches arrow-go's handler hands out, until its stream closes; an error it gives is kept.
func drain(stream <-chan cdata.RecordMessage) ([]arrow.RecordBatch, *streamError) {
	var recs []arrow.RecordBatch
	var failure *streamError
	timeout := time.After(asyncDeadline)
	for {
		select {
		case m, ok := <-stream:
			if !ok {
				return recs, failure
			}
			if m.Err != nil {
				var e cdata.AsyncStreamError
				if errors.As(m.Err, &e) {
					failure = &streamError{Errno: e.Code, Message: e.Msg}
				} else {
					failure = &streamError{Message: m.Err.Error()}
				}
			} else {
				recs = append(recs, m.Record)
			}
		case <-timeout:
			return recs, &streamError{Message: "the stream did not end within " + asyncDeadline.String()}
		}
	}
}
