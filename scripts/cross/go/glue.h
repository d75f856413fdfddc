// C helpers of the arrow-go peer (glue.c): releasing a root the peer did not
// hand to arrow-go, and the serialised async play (one lock around every
// call into the loader, which is not thread-safe, while arrow-go's async
// handler calls request, extract_data and release from its own goroutines).
#ifndef PEER_GLUE_H_INCLUDED
#define PEER_GLUE_H_INCLUDED

#include <stdint.h>

#include "fixtures/acd_fixture.h"

// Calls the release of root `ptr` of `kind` (docs/fixtures.md, root table)
// if it still holds one. Returns 1 if it did.
int PeerReleaseRoot(uint32_t kind, void* ptr);
// Whether the root still holds its release (arrow-go moves out what it takes).
int PeerHoldsRelease(uint32_t kind, void* ptr);

struct PeerAsync;
// A play of async root `root` into arrow-go's handler `go_handler` (C memory,
// filled by cdata.CreateAsyncDeviceStreamHandler). The loader is given a proxy
// handler and arrow-go a proxy producer and proxy tasks, which take the lock.
struct PeerAsync* PeerAsyncNew(struct AcdFixture* fx, uint32_t root, struct ArrowAsyncDeviceStreamHandler* go_handler);
// The producer's side, on one thread: AcdFixtureAsyncStart (arrow-go's
// on_schema runs inside it), then rounds of AcdFixtureAsyncStep until the
// handler is released, each round after a request or cancel of the consumer.
// 0, or ETIMEDOUT with `message` when no request came for timeout_seconds.
int PeerAsyncRun(struct PeerAsync* a, int timeout_seconds, char* message, size_t message_size);
// The loader's counts of the play, and the consumer's calls of request or
// cancel after the handler's release (the producer may have freed itself by then).
void PeerAsyncCounts(struct PeerAsync* a, struct AcdFixtureAsyncCounts* out, int64_t* after_release);
// 1 when arrow-go's on_schema refused the stream and its release was not called: arrow-go frees its
// state in on_schema's error path and leaves release set, which would then panic (glue.c).
int PeerAsyncReleaseWithheld(struct PeerAsync* a);
// AcdFixtureAsyncFree under the lock, then frees the proxies: its problems.
int PeerAsyncFree(struct PeerAsync* a, char* report, size_t report_size);
// The lock around every call into the loader (recursive).
void PeerLock(void);
void PeerUnlock(void);

#endif  // PEER_GLUE_H_INCLUDED
