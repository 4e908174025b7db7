/* A minimal bcryptprimitives.dll for Wine before 9, which lacks it: Rust's
 * standard library (1.78 and later) imports ProcessPrng from it, and without
 * it every Windows build of Parley fails to load under Wine (exit status 53).
 * Built by scripts/test into the Wine prefix; never shipped. */
#include <windows.h>
#define SystemFunction036 NTAPI SystemFunction036
#include <ntsecapi.h>
#undef SystemFunction036

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!RtlGenRandom(data, n)) return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
