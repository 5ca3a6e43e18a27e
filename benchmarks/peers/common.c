#include <stdlib.h>
#include "peers.h"

void *peer_scratch(int slot, size_t size) {
    static void *buf[8];
    static size_t cap[8];
    if (slot < 0 || slot >= 8) return NULL;
    if (size > cap[slot]) {
        void *p = realloc(buf[slot], size);
        if (!p) return NULL;
        buf[slot] = p;
        cap[slot] = size;
    }
    return buf[slot];
}
