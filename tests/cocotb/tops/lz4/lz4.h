/* The two LZ4 block functions Verilator's FST writer calls, declared as the
 * LZ4 library's public header does (the ABI has been stable since r129).
 * Debian systems carry the LZ4 runtime (liblz4.so.1, which apt itself
 * needs) but not its development header; this header and the linker script
 * beside it let the cocotb benches write FST waveforms without installing
 * liblz4-dev. */
#ifndef ROCENIC_LZ4_SHIM_H
#define ROCENIC_LZ4_SHIM_H
#ifdef __cplusplus
extern "C" {
#endif
int LZ4_compressBound(int inputSize);
int LZ4_compress_default(const char *src, char *dst, int srcSize, int dstCapacity);
#ifdef __cplusplus
}
#endif
#endif
