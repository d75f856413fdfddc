// Producing ArrowSchema trees: one allocation per node holds the node's
// private data, its child pointer array, its child structs, its dictionary
// struct and copies of its strings. Children and the dictionary are released
// by their own callbacks, so a consumer may move any of them out first.

#include <errno.h>
#include <string.h>

#include "model/model.h"

// The children and the dictionary are kept here too: the struct's own fields
// are the consumer's to change, the block's layout is ours.
struct AcdSchemaPrivate {
  uint32_t kind;  // ACD_KIND_SCHEMA
  int64_t n_children;
  struct ArrowSchema* children;
  struct ArrowSchema* dictionary;
};

// Does nothing on a struct whose private_data is not one of our schema
// blocks (a corrupted struct pointing its release here); AcdSchemaRelease
// then reports it.
void AcdSchemaReleaseOwned(struct ArrowSchema* schema) {
  struct AcdSchemaPrivate* private_data = (struct AcdSchemaPrivate*)schema->private_data;
  if (!AcdPrivateIs(private_data, ACD_KIND_SCHEMA)) return;
  for (int64_t i = 0; i < private_data->n_children; i++) {
    AcdSchemaRelease(&private_data->children[i]);
  }
  AcdSchemaRelease(private_data->dictionary);
  private_data->kind = 0;
  AcdFree(private_data);
  schema->release = NULL;
}

// Known to abi/callback.c as a schema's release only.
ACD_CONSTRUCTOR(AcdSchemaRegisterCallbacks) {
  ACD_CALLBACK_REGISTER(&AcdSchemaReleaseOwned, ACD_ROLE_SCHEMA_RELEASE);
}

static int64_t AcdAlignUp(int64_t n) { return (n + 15) / 16 * 16; }

int AcdSchemaInit(struct ArrowSchema* schema, const char* format, const char* name,
                  const char* metadata, int64_t flags, int64_t n_children,
                  int with_dictionary, struct AcdError* error) {
  schema->release = NULL;
  if (format == NULL) return AcdErrorSet(error, EINVAL, "format is NULL");
  int64_t metadata_size = AcdMetadataSize(metadata, -1, error);
  if (metadata_size < 0) return EINVAL;
  return AcdSchemaInitSized(schema, format, (int64_t)strlen(format), name,
                            name == NULL ? -1 : (int64_t)strlen(name), metadata,
                            metadata == NULL ? -1 : metadata_size, flags, n_children,
                            with_dictionary, error);
}

int AcdSchemaCheckSized(const char* format, int64_t format_length, const char* name,
                        int64_t name_length, const char* metadata, int64_t metadata_size,
                        int64_t n_children, struct AcdError* error) {
  if (format == NULL || format_length < 0) return AcdErrorSet(error, EINVAL, "format is NULL");
  if (memchr(format, '\0', (size_t)format_length) != NULL) {
    return AcdErrorSet(error, EINVAL, "format contains a NUL byte");
  }
  if (name != NULL && memchr(name, '\0', (size_t)name_length) != NULL) {
    return AcdErrorSet(error, EINVAL, "name '%s' contains a NUL byte", name);
  }
  if (n_children < 0 || n_children > (INT32_MAX / 256)) {
    return AcdErrorSet(error, EINVAL, "n_children: expected 0 to %d, found %lld",
                       INT32_MAX / 256, (long long)n_children);
  }
  if (metadata != NULL) {
    int64_t checked = AcdMetadataSize(metadata, metadata_size, error);
    if (checked < 0) return EINVAL;
    if (checked != metadata_size) {
      return AcdErrorSet(error, EINVAL, "metadata: %lld bytes, of which %lld hold its pairs",
                         (long long)metadata_size, (long long)checked);
    }
  }
  return ACD_OK;
}

int AcdSchemaInitSized(struct ArrowSchema* schema, const char* format, int64_t format_length,
                       const char* name, int64_t name_length, const char* metadata,
                       int64_t metadata_size, int64_t flags, int64_t n_children,
                       int with_dictionary, struct AcdError* error) {
  schema->release = NULL;
  int code = AcdSchemaCheckSized(format, format_length, name, name_length, metadata, metadata_size,
                                 n_children, error);
  if (code != ACD_OK) return code;
  int64_t format_size = format_length + 1;
  int64_t name_size = name == NULL ? 0 : name_length + 1;
  if (metadata == NULL) metadata_size = 0;

  // Layout of the single block, each part 16-byte aligned.
  int64_t at = AcdAlignUp((int64_t)sizeof(struct AcdSchemaPrivate));
  int64_t children_at = at;
  at += AcdAlignUp(n_children * (int64_t)sizeof(struct ArrowSchema*));
  int64_t child_structs_at = at;
  at += n_children * (int64_t)sizeof(struct ArrowSchema);
  int64_t dictionary_at = at;
  at += with_dictionary ? (int64_t)sizeof(struct ArrowSchema) : 0;
  int64_t format_at = at;
  at += format_size;
  int64_t name_at = at;
  at += name_size;
  int64_t metadata_at = at;
  at += metadata_size;

  unsigned char* block = AcdCalloc(1, at);
  if (block == NULL) return AcdErrorSet(error, ENOMEM, "out of memory allocating a schema of %lld bytes", (long long)at);
  struct AcdSchemaPrivate* private_data = (struct AcdSchemaPrivate*)block;
  private_data->kind = ACD_KIND_SCHEMA;
  private_data->n_children = n_children;
  private_data->children = (struct ArrowSchema*)(block + child_structs_at);
  private_data->dictionary = with_dictionary ? (struct ArrowSchema*)(block + dictionary_at) : NULL;

  // The calloc'd block supplies the terminating NULs.
  memcpy(block + format_at, format, (size_t)format_length);
  if (name != NULL) memcpy(block + name_at, name, (size_t)name_length);
  if (metadata != NULL) memcpy(block + metadata_at, metadata, (size_t)metadata_size);

  struct ArrowSchema** children = (struct ArrowSchema**)(block + children_at);
  for (int64_t i = 0; i < n_children; i++) {
    children[i] = (struct ArrowSchema*)(block + child_structs_at) + i;
  }

  schema->format = (const char*)(block + format_at);
  schema->name = name == NULL ? NULL : (const char*)(block + name_at);
  schema->metadata = metadata == NULL ? NULL : (const char*)(block + metadata_at);
  schema->flags = flags;
  schema->n_children = n_children;
  schema->children = n_children > 0 ? children : NULL;
  schema->dictionary = with_dictionary ? (struct ArrowSchema*)(block + dictionary_at) : NULL;
  schema->private_data = private_data;
  schema->release = &AcdSchemaReleaseOwned;
  return ACD_OK;
}
