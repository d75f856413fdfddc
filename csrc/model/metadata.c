// ArrowSchema.metadata: an int32 pair count, then per pair an int32 key
// length, the key bytes, an int32 value length and the value bytes, all
// integers in native endianness and with no alignment guarantee. Keys and
// values are binary strings (the spec): any bytes, UTF-8 or not. Also the
// length of a C string (format, name) that may run past readable memory.

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model/model.h"

// Whether `size` bytes at `offset` may be read: within `limit` when it is
// not negative, else within readable memory.
static int AcdMetadataReadable(const char* metadata, int64_t limit, int64_t offset,
                               int64_t size) {
  if (size > INT64_MAX - offset) return 0;
  if (limit >= 0) return offset + size <= limit;
  return size == 0 || AcdAddressRangeValid(metadata + offset, size);
}

static int64_t AcdMetadataPastEnd(struct AcdError* error, const char* what, int64_t limit,
                                  int64_t offset, int64_t size) {
  if (limit >= 0) {
    AcdErrorSet(error, EINVAL,
                "metadata: %s runs past the %" PRId64 "-byte limit (needs %" PRId64
                " bytes at offset %" PRId64 ")",
                what, limit, size, offset);
  } else {
    AcdErrorSet(error, EINVAL,
                "metadata: %s runs past the end of readable memory (needs %" PRId64
                " bytes at offset %" PRId64 ")",
                what, size, offset);
  }
  return -1;
}

// Skips one length-prefixed binary string at *offset ("key 2", "value 0").
// The names are formatted only on error: a corrupted pair count can make
// this loop run millions of times before it reaches the end of memory.
static int64_t AcdMetadataReadString(const char* metadata, int64_t limit, int64_t* offset,
                                     const char* part, int32_t index, struct AcdError* error) {
  char what[48];
  if (!AcdMetadataReadable(metadata, limit, *offset, 4)) {
    snprintf(what, sizeof(what), "%s %" PRId32 " length", part, index);
    return AcdMetadataPastEnd(error, what, limit, *offset, 4);
  }
  int32_t length;
  memcpy(&length, metadata + *offset, sizeof(length));
  *offset += 4;
  if (length < 0) {
    AcdErrorSet(error, EINVAL, "metadata: %s %" PRId32 " length %" PRId32 " is negative", part,
                index, length);
    return -1;
  }

  if (!AcdMetadataReadable(metadata, limit, *offset, length)) {
    snprintf(what, sizeof(what), "%s %" PRId32, part, index);
    return AcdMetadataPastEnd(error, what, limit, *offset, length);
  }
  *offset += length;
  return 0;
}

// How many empty pairs (two zero lengths, 8 zero bytes each) follow at
// offset, up to `left`: a count of millions over zeroed memory is checked a
// block at a time, not pair by pair (each pair costs two range checks).
static int64_t AcdMetadataEmptyPairs(const char* metadata, int64_t limit, int64_t offset,
                                     int64_t left) {
  int64_t run = 0;
  while (run < left) {
    int64_t block = left - run < 512 ? left - run : 512;
    if (!AcdMetadataReadable(metadata, limit, offset + 8 * run, 8 * block)) block = 1;
    if (!AcdMetadataReadable(metadata, limit, offset + 8 * run, 8 * block)) return run;
    for (int64_t k = 0; k < block; k++) {
      uint64_t pair;
      memcpy(&pair, metadata + offset + 8 * (run + k), sizeof(pair));
      if (pair != 0) return run + k;
    }
    run += block;
  }
  return run;
}

int64_t AcdMetadataSize(const char* metadata, int64_t limit, struct AcdError* error) {
  if (metadata == NULL) return 0;

  int64_t offset = 0;
  if (!AcdMetadataReadable(metadata, limit, offset, 4)) {
    return AcdMetadataPastEnd(error, "pair count", limit, offset, 4);
  }
  int32_t n_pairs;
  memcpy(&n_pairs, metadata, sizeof(n_pairs));
  offset += 4;
  if (n_pairs < 0) {
    AcdErrorSet(error, EINVAL, "metadata: pair count %" PRId32 " is negative", n_pairs);
    return -1;
  }

  for (int32_t i = 0; i < n_pairs;) {
    int64_t empty = AcdMetadataEmptyPairs(metadata, limit, offset, n_pairs - i);
    if (empty > 0) {
      i += (int32_t)empty;
      offset += 8 * empty;
      continue;
    }
    if (AcdMetadataReadString(metadata, limit, &offset, "key", i, error) != 0) return -1;
    if (AcdMetadataReadString(metadata, limit, &offset, "value", i, error) != 0) return -1;
    i++;
  }
  return offset;
}

// The length of a NUL-terminated string (model.h), read as carefully as
// metadata. Checks 64 bytes at a time, then byte by byte near the end.
int64_t AcdStringLength(const char* s) {
  int64_t i = 0;
  for (;;) {
    int64_t chunk = AcdAddressRangeValid(s + i, 64) ? 64 : 1;
    if (chunk == 1 && !AcdAddressRangeValid(s + i, 1)) return -1;
    const char* end = memchr(s + i, '\0', (size_t)chunk);
    if (end != NULL) return (int64_t)(end - s);
    i += chunk;
  }
}
