/* testutil.c - temporary images and patterns for the unit tests. */
#include "config.h"
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *tu_temp_path(const char *tag)
{
	const char *dir = getenv("TMPDIR");
	char *path;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	if (asprintf(&path, "%s/sufs-unit-%s-XXXXXX", dir, tag) < 0)
		fail_msg("out of memory");
	fd = mkstemp(path);
	if (fd < 0)
		fail_msg("mkstemp %s: %s", path, strerror(errno));
	close(fd);
	return path;
}

void tu_default_opts(struct sufs_mkfs_opts *o, uint32_t block_size)
{
	memset(o, 0, sizeof(*o));
	o->block_size = block_size;
	o->fixed_time = 1;
	o->time_sec = TU_TIME_SEC;
	o->time_nsec = TU_TIME_NSEC;
}

void tu_make_opts(struct tfs *t, uint64_t bytes, const struct sufs_mkfs_opts *o)
{
	struct sufs_dev *dev;
	char *path = tu_temp_path("img");
	int rc;

	memset(t, 0, sizeof(*t));
	snprintf(t->path, sizeof(t->path), "%s", path);
	free(path);
	t->bytes = bytes;
	if (truncate(t->path, (off_t)bytes))
		fail_msg("truncate %s: %s", t->path, strerror(errno));
	rc = sufs_dev_open(t->path, SUFS_DEV_RDWR, &dev);
	if (rc)
		fail_msg("sufs_dev_open %s: %s", t->path, sufs_strerror(rc));
	rc = sufs_mkfs(dev, o, &t->fs);
	if (rc) {
		sufs_dev_close(dev);
		fail_msg("sufs_mkfs: %s", sufs_strerror(rc));
	}
}

void tu_make(struct tfs *t, uint64_t bytes, uint32_t block_size)
{
	struct sufs_mkfs_opts o;

	tu_default_opts(&o, block_size);
	tu_make_opts(t, bytes, &o);
}

void tu_close(struct tfs *t)
{
	int rc;

	if (!t->fs)
		return;
	rc = sufs_close(t->fs);
	t->fs = NULL;
	if (rc)
		fail_msg("sufs_close: %s", sufs_strerror(rc));
}

void tu_reopen(struct tfs *t, unsigned flags)
{
	int rc;

	tu_close(t);
	rc = sufs_open(t->path, flags, &t->fs);
	if (rc) {
		t->fs = NULL;
		fail_msg("sufs_open %s: %s", t->path, sufs_strerror(rc));
	}
}

void tu_destroy(struct tfs *t)
{
	if (t->fs)
		sufs_close(t->fs);
	t->fs = NULL;
	if (t->path[0])
		unlink(t->path);
	t->path[0] = 0;
}

static int setup(void **state, uint32_t block_size)
{
	struct tfs *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	*state = t;
	tu_make(t, 16u << 20, block_size);
	tu_reopen(t, SUFS_OPEN_RDWR);
	return 0;
}

int tu_setup_4k(void **state)
{
	return setup(state, 4096);
}

int tu_setup_1k(void **state)
{
	return setup(state, 1024);
}

int tu_teardown(void **state)
{
	struct tfs *t = *state;

	if (t) {
		tu_destroy(t);
		free(t);
	}
	*state = NULL;
	return 0;
}

/* splitmix64's finaliser: every output bit depends on every input bit. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

uint8_t tu_pattern_byte(uint32_t seed, uint64_t off)
{
	uint64_t word = mix64(((uint64_t)seed << 40) ^ (off >> 3) ^ 0x5375667354657374ull);
	return (uint8_t)(word >> (8 * (off & 7)));
}

void tu_pattern_fill(void *buf, size_t len, uint32_t seed, uint64_t off)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = tu_pattern_byte(seed, off + i);
}

long tu_pattern_check(const void *buf, size_t len, uint32_t seed, uint64_t off)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != tu_pattern_byte(seed, off + i))
			return (long)i;
	return -1;
}

uint64_t tu_count_free_blocks(struct sufs_fs *fs, uint32_t group)
{
	const struct sufs_super *sb = sufs_get_super(fs);
	struct sufs_group_layout l;
	uint64_t b, n = 0;
	int set;

	sufs_group_layout(sb, group, &l);
	for (b = l.start; b < l.end; b++) {
		assert_int_equal(sufs_bitmap_test(fs, SUFS_BITMAP_BLOCK, b, &set), 0);
		n += !set;
	}
	return n;
}

uint32_t tu_count_free_inodes(struct sufs_fs *fs, uint32_t group)
{
	const struct sufs_super *sb = sufs_get_super(fs);
	uint64_t i, first = (uint64_t)group * sb->inodes_per_group + 1;
	uint32_t n = 0;
	int set;

	for (i = first; i < first + sb->inodes_per_group; i++) {
		assert_int_equal(sufs_bitmap_test(fs, SUFS_BITMAP_INODE, i, &set), 0);
		n += !set;
	}
	return n;
}

void tu_assert_summaries(struct sufs_fs *fs)
{
	const struct sufs_super *sb = sufs_get_super(fs);
	struct sufs_group gd;
	uint64_t blocks = 0, inodes = 0, nb;
	uint32_t g, ni;

	for (g = 0; g < sb->groups_count; g++) {
		assert_int_equal(sufs_get_group(fs, g, &gd), 0);
		nb = tu_count_free_blocks(fs, g);
		ni = tu_count_free_inodes(fs, g);
		assert_int_equal(gd.free_blocks, nb);
		assert_int_equal(gd.free_inodes, ni);
		blocks += nb;
		inodes += ni;
	}
	assert_int_equal(sb->free_blocks, blocks);
	assert_int_equal(sb->free_inodes, inodes);
}
