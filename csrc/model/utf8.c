// UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing above
// U+10FFFF), shared by metadata, schema names and string arrays.

#include <string.h>

#include "model/model.h"

// The length of the valid sequence starting at s[0] (with `left` bytes
// available), or 0 when it is not valid.
static int64_t AcdUtf8SequenceLength(const uint8_t* s, int64_t left) {
  uint8_t c = s[0];
  if (c < 0x80) return 1;

  int64_t n;
  uint8_t lo = 0x80;
  uint8_t hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }

  if (left < n) return 0;
  if (s[1] < lo || s[1] > hi) return 0;
  for (int64_t i = 2; i < n; i++) {
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  }
  return n;
}

int64_t AcdUtf8Validate(const void* data, int64_t size) {
  const uint8_t* s = (const uint8_t*)data;
  int64_t i = 0;
  while (i < size) {
    // ASCII runs are the common case: test 8 bytes at a time.
    if (size - i >= 8) {
      uint64_t word;
      memcpy(&word, s + i, sizeof(word));
      if ((word & UINT64_C(0x8080808080808080)) == 0) {
        i += 8;
        continue;
      }
    }
    int64_t n = AcdUtf8SequenceLength(s + i, size - i);
    if (n == 0) return i;
    i += n;
  }
  return -1;
}

int64_t AcdUtf8ValidateAt(const void* data, int64_t size) {
  if (!AcdIsForeignAddress(data)) return AcdUtf8Validate(data, size);
  // Another module's bytes (abi/window.c): in chunks, a sequence cut at a
  // chunk's end starting the next chunk.
  uint8_t chunk[4096];
  int64_t done = 0;
  while (done < size) {
    int64_t n = size - done < (int64_t)sizeof(chunk) ? size - done : (int64_t)sizeof(chunk);
    AcdLoad((const uint8_t*)data + done, chunk, (size_t)n);
    int64_t bad = AcdUtf8Validate(chunk, n);
    if (bad < 0) {
      done += n;
    } else if (done + n < size && bad > 0 && n - bad < 4) {
      done += bad;
    } else {
      return done + bad;
    }
  }
  return -1;
}
