/* Kernel cache entries as read from disk: any bytes are either refused or a whole entry for the
 * key asked for, whose payload is exactly the rest of the file. Read only within the input. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    /* The key is taken from the input's own key field where there is one, so that the fuzzer
     * reaches past the key check; a second key that differs must always be refused. */
    static const unsigned char secret[32] = {7}; /* the folder's secret: any fixed one */
    unsigned char key[32] = {0}, other[32];
    if (size >= 40) memcpy(key, data + 8, 32);
    memcpy(other, key, 32);
    other[0] ^= 1;
    unsigned char *copy = malloc(size ? size : 1); /* exactly size bytes: ASan sees any overread */
    if (!copy) abort();
    memcpy(copy, data, size);
    size_t payload = gp__cache_entry_payload(copy, size, key, secret);
    if (payload) FUZZ_REQUIRE(payload < size && size - payload == 80);
    FUZZ_REQUIRE(gp__cache_entry_payload(copy, size, other, secret) == 0);
    free(copy);
    return 0;
}
