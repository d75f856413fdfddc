// The portable fixture loader (csrc/fixtures/acd_fixture.c), compiled into the
// arrow-go peer by cgo: the Go package's CFLAGS put csrc/ on the include path.
#include "fixtures/acd_fixture.c"
