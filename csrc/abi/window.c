// The foreign window (abi.h): addresses that stand for bytes of another
// memory, read through a reader the embedder maps (on wasm, the TypeScript
// side copying from another module's WebAssembly.Memory; natively, a test's
// function). Reads go through a few cached lines, so that a scan of offsets
// interleaved with a scan of the values they point to costs one fetch per
// line of each, not one per value. A line starts at 64 bytes (the
// validator's reads at 'default' are a few values, an offsets buffer's first
// and last entries: two calls into JS cost less than copying the 4 KiB
// between them, issue 14) and doubles while a scan goes on past its end, up
// to 16 KiB. Before the lines, a read looks in the preloaded entries: bytes
// the embedder read itself and handed in with the mapping.

#include <string.h>

#include "abi/abi.h"

#if defined(__EMSCRIPTEN__)
#include <emscripten/em_js.h>
#include <emscripten/emscripten.h>
// The TypeScript side installs Module.acdForeignRead, which reads the memory
// mapped for the validation under way (ts/abi/core.ts arrayValidateForeign);
// addresses cross as unsigned 32-bit.
EM_JS(int, AcdForeignReadJs, (uint32_t address, void* dst, size_t n), {
  var read = Module["acdForeignRead"];
  return read ? read(address >>> 0, dst >>> 0, n >>> 0) : 1;
});

static int AcdForeignReadThroughJs(uint64_t address, void* dst, size_t n) {
  if (address > UINT32_MAX) return 1;
  return AcdForeignReadJs((uint32_t)address, dst, n);
}

void AcdForeignMapJs(uint64_t origin, uint64_t size) {
  AcdForeignMap(&AcdForeignReadThroughJs, origin, size);
}
#endif

#define ACD_WINDOW_LINES 4
#define ACD_WINDOW_LINE_SIZE 16384
#define ACD_WINDOW_FIRST_FETCH 64

struct AcdWindowLine {
  uint64_t start;  // offset in the window of line[0]
  uint64_t size;   // bytes held; 0 when empty
  uint64_t used;   // the tick of the last hit, for least-recently-used eviction
  uint8_t bytes[ACD_WINDOW_LINE_SIZE];
};

static AcdForeignRead acd_read = NULL;
static uint64_t acd_origin = 0;
static uint64_t acd_size = 0;
static uint64_t acd_tick = 0;
static struct AcdWindowLine acd_lines[ACD_WINDOW_LINES];
static struct AcdForeignPreload acd_preloads[ACD_FOREIGN_PRELOADS];
static int acd_preload_count = 0;

void AcdForeignMap(AcdForeignRead read, uint64_t origin, uint64_t size) {
  if (size >= (uint64_t)ACD_FOREIGN_ADDRESS_SIZE) size = (uint64_t)ACD_FOREIGN_ADDRESS_SIZE - 1;
  acd_read = size > 0 ? read : NULL;
  acd_origin = origin;
  acd_size = acd_read != NULL ? size : 0;
  for (int k = 0; k < ACD_WINDOW_LINES; k++) acd_lines[k].size = 0;
  acd_preload_count = 0;
}

// ---- preloaded bytes ----------------------------------------------------------
// The validator's reads at 'default' are a few values per node (an offsets
// buffer's first and last entries), each a call of the reader, which on wasm
// is a call into JavaScript (issue 14: about a seventh of an import of a
// small batch from another module). The TypeScript side, which knows the
// schema, reads those values itself while it writes the shadow and hands
// them in here; a read they do not cover goes to the lines as before.

int AcdForeignPreload(uint64_t at, const void* bytes, size_t n) {
  if (acd_preload_count >= ACD_FOREIGN_PRELOADS || n == 0 || n > 8 || at > acd_size || n > acd_size - at) {
    return 1;
  }
  struct AcdForeignPreload* e = &acd_preloads[acd_preload_count++];
  e->at = at;
  e->size = (uint32_t)n;
  memcpy(e->bytes, bytes, n);
  return 0;
}

struct AcdForeignPreload* AcdForeignPreloadTable(void) { return acd_preloads; }

void AcdForeignPreloaded(int count) {
  acd_preload_count = count < 0 ? 0 : count > ACD_FOREIGN_PRELOADS ? ACD_FOREIGN_PRELOADS : count;
}

// Whether a preloaded entry holds [at, at + n) (window offsets): then copied into dst.
static int AcdPreloadedRead(uint64_t at, void* dst, size_t n) {
  for (int k = 0; k < acd_preload_count; k++) {
    const struct AcdForeignPreload* e = &acd_preloads[k];
    // Entries written in place are checked here: within 8 bytes, within the mapped size.
    if (e->size == 0 || e->size > 8 || e->at > acd_size || e->size > acd_size - e->at) continue;
    if (at >= e->at && at - e->at <= e->size && n <= e->size - (at - e->at)) {
      memcpy(dst, e->bytes + (at - e->at), n);
      return 1;
    }
  }
  return 0;
}

int AcdAddressInForeignWindow(uintptr_t address, int64_t size) {
  uint64_t at = (uint64_t)address;
  uint64_t base = (uint64_t)ACD_FOREIGN_ADDRESS_BASE;
  uint64_t end = at + (uint64_t)(size > 0 ? size : 1);
  if (end < at) return 1;  // wraps around
  return at < base + (uint64_t)ACD_FOREIGN_ADDRESS_SIZE && end > base;
}

uint64_t AcdForeignAddressOf(uintptr_t address) {
  return acd_origin + ((uint64_t)address - (uint64_t)ACD_FOREIGN_ADDRESS_BASE);
}

uint64_t AcdForeignEnd(void) { return acd_origin + acd_size; }

int AcdForeignRangeReadable(uintptr_t address, int64_t size) {
  uint64_t at = (uint64_t)address - (uint64_t)ACD_FOREIGN_ADDRESS_BASE;
  return (uint64_t)address >= (uint64_t)ACD_FOREIGN_ADDRESS_BASE && size >= 0 &&
         at <= acd_size && (uint64_t)size <= acd_size - at;
}

// The line holding offset `at` of the window, fetched when no line does:
// `wanted` bytes at least (those the read asks for), twice as many as a line
// that ends at `at` holds (a scan going on), up to a line's size.
static struct AcdWindowLine* AcdWindowLineAt(uint64_t at, uint64_t wanted) {
  struct AcdWindowLine* victim = &acd_lines[0];
  for (int k = 0; k < ACD_WINDOW_LINES; k++) {
    struct AcdWindowLine* line = &acd_lines[k];
    if (line->size > 0 && at >= line->start && at - line->start < line->size) {
      line->used = ++acd_tick;
      return line;
    }
    if (line->used < victim->used) victim = line;
  }
  uint64_t want = wanted > ACD_WINDOW_FIRST_FETCH ? wanted : ACD_WINDOW_FIRST_FETCH;
  for (int k = 0; k < ACD_WINDOW_LINES; k++) {
    const struct AcdWindowLine* line = &acd_lines[k];
    if (line->size > 0 && line->start + line->size == at && 2 * line->size > want) want = 2 * line->size;
  }
  if (want > ACD_WINDOW_LINE_SIZE) want = ACD_WINDOW_LINE_SIZE;
  uint64_t n = acd_size - at < want ? acd_size - at : want;
  victim->start = at;
  victim->size = 0;
  if (acd_read == NULL || n == 0 || acd_read(acd_origin + at, victim->bytes, (size_t)n) != 0) {
    return NULL;
  }
  victim->size = n;
  victim->used = ++acd_tick;
  return victim;
}

void AcdForeignLoad(const void* ptr, void* dst, size_t n) {
  uintptr_t address = (uintptr_t)ptr;
  // Checked readable by the caller; a read the reader refuses all the same
  // (the foreign memory cannot shrink, so only a caller's bug) reads zeros.
  uint8_t* out = (uint8_t*)dst;
  uint64_t at = (uint64_t)address - (uint64_t)ACD_FOREIGN_ADDRESS_BASE;
  if (n <= 8 && acd_preload_count > 0 && AcdPreloadedRead(at, dst, n)) return;
  while (n > 0) {
    struct AcdWindowLine* line = at < acd_size ? AcdWindowLineAt(at, n) : NULL;
    if (line == NULL) {
      memset(out, 0, n);
      return;
    }
    uint64_t in_line = line->size - (at - line->start);
    size_t take = in_line < n ? (size_t)in_line : n;
    memcpy(out, line->bytes + (at - line->start), take);
    out += take;
    at += take;
    n -= take;
  }
}
