// Error messages: one fixed-size buffer per call chain, filled by the callee
// that detects the problem and prefixed with the path by each caller on the
// way up.

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "abi/abi.h"

int AcdErrorSet(struct AcdError* error, int code, const char* fmt, ...) {
  if (error == NULL) return code;

  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(error->message, sizeof(error->message), fmt, args);
  va_end(args);
  if (n < 0) error->message[0] = '\0';
  error->path[0] = '\0';
  return code;
}

void AcdErrorPrefix(struct AcdError* error, const char* fmt, ...) {
  if (error == NULL) return;

  char prefix[sizeof(error->message)];
  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(prefix, sizeof(prefix), fmt, args);
  va_end(args);
  if (n < 0) return;

  // Build "prefix: message" by moving the message right, keeping the
  // terminator inside the buffer; the message's tail is what gets cut.
  size_t capacity = sizeof(error->message) - 1;
  size_t prefix_len = strlen(prefix);
  if (prefix_len > capacity - 2) prefix_len = capacity - 2;
  size_t head = prefix_len + 2;
  const char* end = memchr(error->message, '\0', capacity);
  size_t message_len = end == NULL ? capacity : (size_t)(end - error->message);
  if (message_len > capacity - head) message_len = capacity - head;

  memmove(error->message + head, error->message, message_len);
  memcpy(error->message, prefix, prefix_len);
  error->message[prefix_len] = ':';
  error->message[prefix_len + 1] = ' ';
  error->message[head + message_len] = '\0';
}
