/*
 * mutate.c - libFuzzer's mutations, aimed at an image's metadata.
 *
 * Left alone, libFuzzer inserts and erases bytes anywhere in the input:
 * most inputs then become images shorter than their superblock says, or
 * have every block shifted, and most of the rest mutate file data that no
 * check reads.  Here each mutation is libFuzzer's own, but applied inside
 * one 1 KiB window (the smallest block) whose size stays the same: half the
 * time in the first 64 KiB, where group 0's superblock, descriptors,
 * bitmaps and inode table lie in the small seed images, else in any block.
 * One mutation in eight is libFuzzer's on the whole input, so that short
 * and odd-sized images are still tried.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

#define WINDOW 1024u
#define FRONT  (64u * 1024u)

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	size_t blocks, off;

	if (size < 2 * WINDOW || seed % 8 == 0)
		return LLVMFuzzerMutate(data, size, max_size);
	seed /= 8;
	blocks = ((seed & 1) && size > FRONT ? FRONT : size) / WINDOW;
	off = (size_t)(seed >> 1) % blocks * WINDOW;
	/* a window that shrinks keeps its old tail: the image keeps its size */
	LLVMFuzzerMutate(data + off, WINDOW, WINDOW);
	return size;
}
