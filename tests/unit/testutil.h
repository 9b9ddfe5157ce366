/*
 * testutil.h - what the cmocka unit tests of libsufs share: a freshly
 * formatted image in a temporary file, a way to reopen it, a deterministic
 * byte pattern, and a check that the free-count summaries agree with the
 * bitmaps.
 *
 * Each test gets its own image through a setup function and loses it in the
 * matching teardown, so a failed assertion (which leaves the test at once)
 * still removes the file.
 */
#ifndef SUFS_TESTUTIL_H
#define SUFS_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "sufs.h"

/* The fixed clock of every test image: timestamps are predictable. */
#define TU_TIME_SEC  1700000000
#define TU_TIME_NSEC 123456789u

/* A test image: a temporary file and, while open, the file system on it. */
struct tfs {
	char path[256];
	struct sufs_fs *fs;        /* NULL while closed */
	uint64_t bytes;
};

/* A path for a new temporary file (created empty); free() it. */
char *tu_temp_path(const char *tag);

/* Options for tu_make_opts(): defaults, the fixed clock, the given block size. */
void tu_default_opts(struct sufs_mkfs_opts *o, uint32_t block_size);

/*
 * Make a temporary image file of `bytes` bytes and format it; t->fs is the
 * file system as sufs_mkfs() returns it (open for writing, not committed
 * until closed).  Fails the test on any error.
 */
void tu_make(struct tfs *t, uint64_t bytes, uint32_t block_size);
void tu_make_opts(struct tfs *t, uint64_t bytes, const struct sufs_mkfs_opts *o);

/* Close the file system (committing it) and open it again with flags. */
void tu_reopen(struct tfs *t, unsigned flags);
/* Close the file system if it is open; fails the test when closing fails. */
void tu_close(struct tfs *t);
/* Close (errors ignored) and remove the image file. */
void tu_destroy(struct tfs *t);

/*
 * cmocka setup and teardown around a struct tfs in *state: a 16 MiB image
 * with 4096-byte blocks, or 1024-byte blocks.  The image is committed and
 * reopened for writing, as a program would find it.
 */
int tu_setup_4k(void **state);
int tu_setup_1k(void **state);
int tu_teardown(void **state);

/* The deterministic pattern: byte i of the stream `seed` at offset off. */
uint8_t tu_pattern_byte(uint32_t seed, uint64_t off);
void tu_pattern_fill(void *buf, size_t len, uint32_t seed, uint64_t off);
/* Index of the first byte that differs from the pattern, or -1. */
long tu_pattern_check(const void *buf, size_t len, uint32_t seed, uint64_t off);

/* Count the clear bits of the bitmaps: what the summaries must say. */
uint64_t tu_count_free_blocks(struct sufs_fs *fs, uint32_t group);
uint32_t tu_count_free_inodes(struct sufs_fs *fs, uint32_t group);
/* Assert that every group's and the superblock's free counts match the
 * bitmaps. */
void tu_assert_summaries(struct sufs_fs *fs);

#endif /* SUFS_TESTUTIL_H */
