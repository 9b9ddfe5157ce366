/*
 * test_dir.c - directory entries: adding, finding and listing names, growing
 * a directory block by block, the longest names, and the checks that keep a
 * malformed block from being trusted.  The directory layer is driven
 * directly (dir_add and friends); inode numbers in entries need not exist.
 */
#include "config.h"
#include "testutil.h"
#include "sufs_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#define BS 1024u

/* A new, empty directory "d" in the root of the 1 KiB-block image. */
static uint32_t new_dir(struct sufs_fs *fs, struct sufs_inode *din)
{
	uint32_t ino;

	assert_int_equal(sufs_mkdir(fs, SUFS_ROOT_INO, "d", 1, 0755, NULL, &ino), 0);
	assert_int_equal(inode_load(fs, ino, din), 0);
	assert_int_equal(din->size, BS);
	return ino;
}

static void add(struct sufs_fs *fs, uint32_t dir, struct sufs_inode *din, const char *name,
		uint32_t ino)
{
	assert_int_equal(dir_add(fs, dir, din, name, strlen(name), ino, SUFS_FT_REG, NULL, &(struct waits){ 0 }, NULL), 0);
	assert_int_equal(inode_store(fs, dir, din, UPD_INODEDEP, NULL, NULL), 0);
}

/* What dir_add may change in a directory's inode. */
static void assert_same_inode(const struct sufs_inode *a, const struct sufs_inode *b)
{
	unsigned i;

	assert_int_equal(a->size, b->size);
	assert_int_equal(a->blocks, b->blocks);
	assert_int_equal(a->links, b->links);
	for (i = 0; i < SUFS_NBLOCKS; i++)
		assert_int_equal(a->block[i], b->block[i]);
}

static uint32_t lookup(struct sufs_fs *fs, uint32_t dir, const struct sufs_inode *din,
		       const char *name, size_t len)
{
	uint32_t ino = 0;

	assert_int_equal(dir_lookup(fs, dir, din, name, len, &ino), 0);
	return ino;
}

struct listing {
	char names[300][SUFS_NAME_MAX + 1];
	uint32_t ino[300];
	unsigned ftype[300];
	unsigned n;
};

static int list_fn(void *arg, const char *name, size_t len, uint32_t ino, unsigned ftype)
{
	struct listing *l = arg;

	assert_true(l->n < 300);
	memcpy(l->names[l->n], name, len);
	l->names[l->n][len] = 0;
	l->ino[l->n] = ino;
	l->ftype[l->n] = ftype;
	l->n++;
	return 0;
}

static void added_names_are_found_and_listed_in_the_order_they_were_added(void **state)
{
	struct sufs_fs *fs = ((struct tfs *)*state)->fs;
	struct sufs_inode din;
	uint32_t dir = new_dir(fs, &din), ino;
	struct listing *l = calloc(1, sizeof(*l));

	assert_non_null(l);
	add(fs, dir, &din, "alpha", 101);
	add(fs, dir, &din, "beta", 102);
	assert_int_equal(dir_add(fs, dir, &din, "gamma", 5, 103, SUFS_FT_DIR, NULL, &(struct waits){ 0 }, NULL), 0);
	assert_int_equal(lookup(fs, dir, &din, "alpha", 5), 101);
	assert_int_equal(lookup(fs, dir, &din, "beta", 4), 102);
	assert_int_equal(lookup(fs, dir, &din, "gamma", 5), 103);
	assert_int_equal(lookup(fs, dir, &din, ".", 1), dir);
	assert_int_equal(lookup(fs, dir, &din, "..", 2), SUFS_ROOT_INO);
	assert_int_equal(dir_lookup(fs, dir, &din, "delta", 5, &ino), -ENOENT);
	assert_int_equal(dir_lookup(fs, dir, &din, "alph", 4, &ino), -ENOENT);
	assert_int_equal(dir_lookup(fs, dir, &din, "alphas", 6, &ino), -ENOENT);

	assert_int_equal(dir_iterate(fs, dir, &din, list_fn, l), 0);
	assert_int_equal(l->n, 5);
	assert_string_equal(l->names[0], ".");
	assert_string_equal(l->names[1], "..");
	assert_string_equal(l->names[2], "alpha");
	assert_string_equal(l->names[3], "beta");
	assert_string_equal(l->names[4], "gamma");
	assert_int_equal(l->ftype[0], SUFS_FT_DIR);
	assert_int_equal(l->ftype[2], SUFS_FT_REG);
	assert_int_equal(l->ftype[4], SUFS_FT_DIR);
	assert_int_equal(l->ino[4], 103);
	assert_int_equal(din.size, BS);
	free(l);
}

static void adding_an_existing_name_fails_with_eexist_and_changes_nothing(void **state)
{
	struct sufs_fs *fs = ((struct tfs *)*state)->fs;
	struct sufs_inode din, before;
	uint32_t dir = new_dir(fs, &din);
	uint8_t blk[BS], after[BS];
	uint64_t pblk;

	add(fs, dir, &din, "same", 200);
	assert_int_equal(bmap_get(fs, &din, 0, &pblk), 0);
	assert_int_equal(sufs_block_read(fs, pblk, blk), 0);
	before = din;
	assert_int_equal(dir_add(fs, dir, &din, "same", 4, 201, SUFS_FT_REG, NULL, &(struct waits){ 0 }, NULL), -EEXIST);
	assert_int_equal(dir_add(fs, dir, &din, ".", 1, 201, SUFS_FT_REG, NULL, &(struct waits){ 0 }, NULL), -EEXIST);
	assert_int_equal(dir_add(fs, dir, &din, "..", 2, 201, SUFS_FT_REG, NULL, &(struct waits){ 0 }, NULL), -EEXIST);
	assert_same_inode(&din, &before);
	assert_int_equal(sufs_block_read(fs, pblk, after), 0);
	assert_memory_equal(after, blk, BS);
	assert_int_equal(lookup(fs, dir, &din, "same", 4), 200);
}

static void a_directory_grows_block_by_block_and_every_block_verifies(void **state)
{
	struct tfs *t = *state;
	struct sufs_inode din;
	uint32_t dir = new_dir(t->fs, &din), i;
	struct listing *l = calloc(1, sizeof(*l));
	char name[32];
	uint8_t blk[BS];
	uint64_t lblk, pblk;
	const char *why;

	assert_non_null(l);
	/* 20-byte names take 32 bytes: 30 fit beside "." and "..", 31 in
	 * every later block, so 200 names need 7 blocks */
	for (i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "n%019u", i);
		assert_int_equal(strlen(name), 20);
		add(t->fs, dir, &din, name, 1000 + i);
	}
	assert_int_equal(din.size, 7 * BS);
	assert_int_equal(din.blocks, 7);
	for (i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "n%019u", i);
		assert_int_equal(lookup(t->fs, dir, &din, name, 20), 1000 + i);
	}
	assert_int_equal(dir_iterate(t->fs, dir, &din, list_fn, l), 0);
	assert_int_equal(l->n, 202);
	assert_string_equal(l->names[201], "n0000000000000000199");

	tu_reopen(t, 0);
	assert_int_equal(inode_load(t->fs, dir, &din), 0);
	assert_int_equal(din.size, 7 * BS);
	for (lblk = 0; lblk < 7; lblk++) {
		assert_int_equal(bmap_get(t->fs, &din, lblk, &pblk), 0);
		assert_int_not_equal(pblk, 0);
		assert_int_equal(sufs_dev_read(sufs_get_dev(t->fs), pblk * BS, blk, BS), 0);
		assert_int_equal(dir_block_check(blk, BS, &why), 0);
		assert_int_equal(get32(blk + BS - 8), DIR_TAIL_MAGIC);
		assert_int_equal(get32(blk + BS - 4), sufs_dirblock_csum(blk, BS, pblk));
	}
	assert_int_equal(lookup(t->fs, dir, &din, "n0000000000000000123", 20), 1123);
	free(l);
}

/* Which block of dir holds name (or -1); and the first block with room for
 * an entry of need bytes (or the block count: a new block), as a scan of
 * every block finds them. */
static int64_t block_of(struct sufs_fs *fs, const struct sufs_inode *din, const char *name,
			uint32_t need, int64_t *first_room)
{
	uint64_t lblk, pblk, n = din->size / BS;
	uint32_t off, reclen, used;
	int64_t found = -1;
	struct buf *b;

	*first_room = (int64_t)n;
	for (lblk = 0; lblk < n; lblk++) {
		assert_int_equal(bmap_get(fs, din, lblk, &pblk), 0);
		assert_int_equal(buf_get(fs, pblk, BUF_DIR, &b), 0);
		for (off = 0; off < BS - SUFS_DIR_TAIL_SIZE; off += reclen) {
			const uint8_t *de = b->data + off;
			reclen = get16(de + DE_RECLEN);
			used = get32(de + DE_INO) ? dirent_size(de[DE_NAMELEN]) : 0;
			if (reclen - used >= need && *first_room == (int64_t)n)
				*first_room = (int64_t)lblk;
			if (used && de[DE_NAMELEN] == strlen(name) &&
			    !memcmp(de + DE_NAME, name, strlen(name)))
				found = (int64_t)lblk;
		}
		buf_put(fs, b);
	}
	return found;
}

/* The index of a large directory (dirhash) finds room where a scan of
 * its blocks would: the first block with room for the new entry, also
 * after removals free room in early blocks and names of every length come
 * and go. */
static void a_large_directory_puts_a_name_in_the_first_block_with_room(void **state)
{
	struct tfs *t = *state;
	struct sufs_inode din;
	uint32_t dir = new_dir(t->fs, &din), i, old, len;
	static char names[700][100];
	static int live[700];
	int64_t want, got;

	for (i = 0; i < 700; i++) {
		/* "i-" and then x's, 5 to 94 bytes in all */
		len = (uint32_t)snprintf(names[i], sizeof(names[i]), "%u-", i);
		while (len < 5 + (i * 37) % 90)
			names[i][len++] = 'x';
		names[i][len] = 0;
		if (i >= 400) {
			/* take away an earlier name first (one of any age and
			 * length), so that room opens up */
			uint32_t k = (uint32_t)(((uint64_t)i * 2654435761u) >> 16) % i;
			if (live[k]) {
				assert_int_equal(dir_set(t->fs, dir, &din, names[k], strlen(names[k]),
							 0, 0, UPD_DIRREM, &(struct waits){ 0 }, &old,
							 NULL), 0);
				live[k] = 0;
			}
		}
		block_of(t->fs, &din, names[i], dirent_size((uint32_t)strlen(names[i])), &want);
		add(t->fs, dir, &din, names[i], 1000 + i);
		live[i] = 1;
		got = block_of(t->fs, &din, names[i], 0, &(int64_t){ 0 });
		if (got != want)
			fail_msg("name %u (%zu bytes) went to block %lld, not %lld", i,
				 strlen(names[i]), (long long)got, (long long)want);
	}
	assert_true(din.size / BS >= 2 * 4); /* large enough to be indexed */
	for (i = 0; i < 700; i++) {
		uint32_t ino = 0;
		assert_int_equal(dir_lookup(t->fs, dir, &din, names[i], strlen(names[i]), &ino),
				 live[i] ? 0 : -ENOENT);
		if (live[i])
			assert_int_equal(ino, 1000 + i);
	}
}

/* More large directories than the index keeps (DIRHASH_MAX_DIRS), used in
 * turn, so that each use evicts another's index and builds its own again
 * from the blocks: every name is still found once, an existing name is
 * still refused, a removed one is gone, and no listing holds a name twice. */
#define NDIRS (sizeof(((struct sufs_fs *)0)->dirhash) / sizeof(((struct sufs_fs *)0)->dirhash[0]) + 8)
#define NNAMES 120

static void dh_name(char *buf, size_t size, unsigned d, unsigned r)
{
	size_t len = (size_t)snprintf(buf, size, "%u-%u-", d, r);

	while (len < 10 + (r * 7 + d) % 31)
		buf[len++] = 'y';
	buf[len] = 0;
}

static void more_large_directories_than_the_index_keeps_lose_no_name(void **state)
{
	struct sufs_fs *fs = ((struct tfs *)*state)->fs;
	static struct sufs_inode din[NDIRS];
	static uint32_t dir[NDIRS];
	static int live[NDIRS][NNAMES];
	struct listing *l = calloc(1, sizeof(*l));
	char name[64];
	unsigned d, r, i, seen, cached = 0;
	uint32_t ino, old;

	assert_non_null(l);
	for (d = 0; d < NDIRS; d++) {
		snprintf(name, sizeof(name), "big%u", d);
		assert_int_equal(sufs_mkdir(fs, SUFS_ROOT_INO, name, strlen(name), 0755, NULL,
					    &dir[d]), 0);
		assert_int_equal(inode_load(fs, dir[d], &din[d]), 0);
	}
	/* one name to each directory in turn */
	for (r = 0; r < NNAMES; r++)
		for (d = 0; d < NDIRS; d++) {
			dh_name(name, sizeof(name), d, r);
			add(fs, dir[d], &din[d], name, 10000 * (d + 1) + r);
			live[d][r] = 1;
		}
	for (d = 0; d < NDIRS; d++)
		assert_true(din[d].size / BS >= 4); /* large enough to be indexed */
	/* take away every third name, in turn, and put back every sixth */
	for (r = 0; r < NNAMES; r += 3)
		for (d = 0; d < NDIRS; d++) {
			dh_name(name, sizeof(name), d, r);
			assert_int_equal(dir_set(fs, dir[d], &din[d], name, strlen(name), 0, 0,
						 UPD_DIRREM, &(struct waits){ 0 }, &old, NULL), 0);
			assert_int_equal(old, 10000 * (d + 1) + r);
			live[d][r] = 0;
		}
	for (r = 0; r < NNAMES; r += 6)
		for (d = 0; d < NDIRS; d++) {
			dh_name(name, sizeof(name), d, r);
			add(fs, dir[d], &din[d], name, 10000 * (d + 1) + r);
			live[d][r] = 1;
		}
	/* an existing name is refused, however long ago its index was built */
	for (r = 0; r < NNAMES; r++)
		for (d = 0; d < NDIRS; d++) {
			dh_name(name, sizeof(name), d, r);
			if (live[d][r])
				assert_int_equal(dir_add(fs, dir[d], &din[d], name, strlen(name), 1,
							 SUFS_FT_REG, NULL, &(struct waits){ 0 },
							 NULL), -EEXIST);
			else
				assert_int_equal(dir_lookup(fs, dir[d], &din[d], name, strlen(name),
							    &ino), -ENOENT);
		}
	/* every slot of the index is taken: some directories were evicted */
	for (i = 0; i < NDIRS - 8; i++)
		cached += fs->dirhash[i] != NULL;
	assert_int_equal(cached, NDIRS - 8);
	for (d = 0; d < NDIRS; d++) {
		l->n = 0;
		assert_int_equal(dir_iterate(fs, dir[d], &din[d], list_fn, l), 0);
		for (r = 0, seen = 2; r < NNAMES; r++) {
			unsigned count = 0;
			dh_name(name, sizeof(name), d, r);
			for (i = 0; i < l->n; i++)
				if (!strcmp(l->names[i], name)) {
					count++;
					assert_int_equal(l->ino[i], 10000 * (d + 1) + r);
				}
			if (count != (unsigned)live[d][r])
				fail_msg("directory %u lists '%s' %u times", d, name, count);
			seen += count;
			if (live[d][r])
				assert_int_equal(lookup(fs, dir[d], &din[d], name, strlen(name)),
						 10000 * (d + 1) + r);
		}
		assert_int_equal(l->n, seen);
	}
	free(l);
}

static void names_of_255_bytes_are_kept_whole(void **state)
{
	struct sufs_fs *fs = ((struct tfs *)*state)->fs;
	struct sufs_inode din;
	uint32_t dir = new_dir(fs, &din), i, k;
	struct listing *l = calloc(1, sizeof(*l));
	char name[4][SUFS_NAME_MAX + 1];

	assert_non_null(l);
	for (k = 0; k < 4; k++) {
		for (i = 0; i < SUFS_NAME_MAX; i++)
			name[k][i] = (char)('a' + (i + k) % 26);
		name[k][SUFS_NAME_MAX] = 0;
		add(fs, dir, &din, name[k], 300 + k);
	}
	/* 264 bytes each: three fit in the first 1 KiB block, the fourth does not */
	assert_int_equal(din.size, 2 * BS);
	for (k = 0; k < 4; k++)
		assert_int_equal(lookup(fs, dir, &din, name[k], SUFS_NAME_MAX), 300 + k);
	assert_int_equal(dir_iterate(fs, dir, &din, list_fn, l), 0);
	assert_int_equal(l->n, 6);
	for (k = 0; k < 4; k++)
		assert_string_equal(l->names[2 + k], name[k]);
	free(l);
}

static void a_name_of_256_bytes_is_too_long(void **state)
{
	struct sufs_fs *fs = ((struct tfs *)*state)->fs;
	struct sufs_inode din, before;
	uint32_t dir = new_dir(fs, &din), ino;
	char name[SUFS_NAME_MAX + 2];

	memset(name, 'x', sizeof(name));
	before = din;
	assert_int_equal(dir_add(fs, dir, &din, name, SUFS_NAME_MAX + 1, 9, SUFS_FT_REG, NULL, &(struct waits){ 0 }, NULL),
			 -ENAMETOOLONG);
	assert_same_inode(&din, &before);
	assert_int_equal(sufs_lookup(fs, dir, name, SUFS_NAME_MAX + 1, &ino), -ENAMETOOLONG);
}

static void names_that_are_empty_or_hold_a_slash_or_nul_are_refused(void **state)
{
	struct sufs_fs *fs = ((struct tfs *)*state)->fs;
	struct sufs_inode din;
	uint32_t dir = new_dir(fs, &din);

	assert_int_equal(dir_add(fs, dir, &din, "", 0, 9, SUFS_FT_REG, NULL, &(struct waits){ 0 }, NULL), -EINVAL);
	assert_int_equal(dir_add(fs, dir, &din, "a/b", 3, 9, SUFS_FT_REG, NULL, &(struct waits){ 0 }, NULL), -EINVAL);
	assert_int_equal(dir_add(fs, dir, &din, "a\0b", 3, 9, SUFS_FT_REG, NULL, &(struct waits){ 0 }, NULL), -EINVAL);
}

static void adding_to_a_file_fails_with_enotdir(void **state)
{
	struct sufs_fs *fs = ((struct tfs *)*state)->fs;
	struct sufs_inode fin;
	uint32_t file, ino;

	assert_int_equal(sufs_create(fs, SUFS_ROOT_INO, "f", 1, 0644, NULL, &file), 0);
	assert_int_equal(inode_load(fs, file, &fin), 0);
	assert_int_equal(dir_add(fs, file, &fin, "x", 1, 9, SUFS_FT_REG, NULL, &(struct waits){ 0 }, NULL), -ENOTDIR);
	assert_int_equal(dir_lookup(fs, file, &fin, "x", 1, &ino), -ENOTDIR);
}

/* ---- dir_block_check -------------------------------------------------------------- */

static void put_dirent(uint8_t *blk, uint32_t off, uint32_t ino, uint16_t reclen,
		       const char *name)
{
	put32(blk + off + DE_INO, ino);
	put16(blk + off + DE_RECLEN, reclen);
	blk[off + DE_NAMELEN] = (uint8_t)strlen(name);
	blk[off + DE_FTYPE] = SUFS_FT_REG;
	memcpy(blk + off + DE_NAME, name, strlen(name));
}

/* "abc" (16 bytes) then "defg" up to the tail. */
static void good_block(uint8_t *blk)
{
	memset(blk, 0, BS);
	put_dirent(blk, 0, 5, 16, "abc");
	put_dirent(blk, 16, 6, BS - 8 - 16, "defg");
}

static void expect_malformed(const uint8_t *blk, const char *what)
{
	const char *why = NULL;

	if (dir_block_check(blk, BS, &why) != -SUFS_ECORRUPT)
		fail_msg("a block with %s was accepted", what);
	assert_non_null(why);
}

static void dir_block_check_accepts_entries_that_tile_the_block(void **state)
{
	uint8_t blk[BS];
	const char *why = NULL;

	(void)state;
	good_block(blk);
	assert_int_equal(dir_block_check(blk, BS, &why), 0);
	/* a free slot's name is not looked at */
	put32(blk + 16 + DE_INO, 0);
	blk[16 + DE_NAMELEN] = 0;
	blk[16 + DE_NAME] = '/';
	assert_int_equal(dir_block_check(blk, BS, &why), 0);
	/* the tail is not an entry */
	memset(blk + BS - 8, 0xff, 8);
	assert_int_equal(dir_block_check(blk, BS, &why), 0);
}

static void dir_block_check_rejects_each_kind_of_malformed_entry(void **state)
{
	uint8_t blk[BS];

	(void)state;
	good_block(blk);
	put16(blk + DE_RECLEN, 0);
	expect_malformed(blk, "rec_len 0");

	good_block(blk);
	put16(blk + DE_RECLEN, 4);
	expect_malformed(blk, "rec_len shorter than a header");

	good_block(blk);
	put16(blk + DE_RECLEN, 20);
	expect_malformed(blk, "rec_len not a multiple of 8");

	good_block(blk);
	put16(blk + 16 + DE_RECLEN, BS - 16);
	expect_malformed(blk, "rec_len crossing into the tail");

	good_block(blk);
	put16(blk + 16 + DE_RECLEN, 0xfff8);
	expect_malformed(blk, "rec_len crossing the end of the block");

	good_block(blk);
	put16(blk + 16 + DE_RECLEN, BS - 8 - 16 - 8);
	expect_malformed(blk, "entries ending short of the tail");

	good_block(blk);
	blk[DE_NAMELEN] = 9;        /* needs 24 bytes, rec_len is 16 */
	expect_malformed(blk, "name_len bigger than rec_len");

	good_block(blk);
	blk[16 + DE_NAMELEN] = 255;
	put16(blk + 16 + DE_RECLEN, 256);
	put_dirent(blk, 16 + 256, 0, BS - 8 - 16 - 256, "");
	expect_malformed(blk, "name_len 255 in a 256-byte record");

	good_block(blk);
	blk[DE_NAMELEN] = 0;
	expect_malformed(blk, "a live entry without a name");

	good_block(blk);
	blk[DE_NAME + 1] = '/';
	expect_malformed(blk, "'/' in a name");

	good_block(blk);
	blk[16 + DE_NAME + 3] = 0;
	expect_malformed(blk, "NUL in a name");
}

static void a_malformed_block_on_disk_fails_lookups_as_corrupt(void **state)
{
	struct tfs *t = *state;
	struct sufs_inode din;
	uint32_t dir = new_dir(t->fs, &din), ino;
	uint8_t blk[BS];
	uint64_t pblk;

	add(t->fs, dir, &din, "x", 9);
	assert_int_equal(bmap_get(t->fs, &din, 0, &pblk), 0);
	tu_close(t);
	{
		struct sufs_dev *dev;
		assert_int_equal(sufs_dev_open(t->path, SUFS_DEV_RDWR, &dev), 0);
		assert_int_equal(sufs_dev_read(dev, pblk * BS, blk, BS), 0);
		/* ".." swallows the rest of the block and beyond; checksum kept valid */
		put16(blk + 16 + DE_RECLEN, (uint16_t)(BS + 64));
		sufs_dirblock_seal(blk, BS, pblk);
		assert_int_equal(sufs_dev_write(dev, pblk * BS, blk, BS), 0);
		sufs_dev_close(dev);
	}
	tu_reopen(t, 0);
	assert_int_equal(inode_load(t->fs, dir, &din), 0);
	assert_int_equal(dir_lookup(t->fs, dir, &din, "x", 1, &ino), -SUFS_ECORRUPT);
	assert_int_equal(sufs_lookup(t->fs, dir, "x", 1, &ino), -SUFS_ECORRUPT);
}

static void a_hole_or_a_ragged_size_in_a_directory_is_corruption(void **state)
{
	struct sufs_fs *fs = ((struct tfs *)*state)->fs;
	struct sufs_inode din, bad;
	uint32_t dir = new_dir(fs, &din), ino;

	bad = din;
	bad.size = 2 * BS;      /* block 1 is a hole */
	assert_int_equal(dir_lookup(fs, dir, &bad, "nope", 4, &ino), -SUFS_ECORRUPT);
	bad = din;
	bad.size = BS + 100;
	assert_int_equal(dir_lookup(fs, dir, &bad, ".", 1, &ino), -SUFS_ECORRUPT);
	assert_int_equal(dir_add(fs, dir, &bad, "new", 3, 9, SUFS_FT_REG, NULL, &(struct waits){ 0 }, NULL), -SUFS_ECORRUPT);
}

#define T1(f) cmocka_unit_test_setup_teardown(f, tu_setup_1k, tu_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T1(added_names_are_found_and_listed_in_the_order_they_were_added),
		T1(adding_an_existing_name_fails_with_eexist_and_changes_nothing),
		T1(a_directory_grows_block_by_block_and_every_block_verifies),
		T1(a_large_directory_puts_a_name_in_the_first_block_with_room),
		T1(more_large_directories_than_the_index_keeps_lose_no_name),
		T1(names_of_255_bytes_are_kept_whole),
		T1(a_name_of_256_bytes_is_too_long),
		T1(names_that_are_empty_or_hold_a_slash_or_nul_are_refused),
		T1(adding_to_a_file_fails_with_enotdir),
		cmocka_unit_test(dir_block_check_accepts_entries_that_tile_the_block),
		cmocka_unit_test(dir_block_check_rejects_each_kind_of_malformed_entry),
		T1(a_malformed_block_on_disk_fails_lookups_as_corrupt),
		T1(a_hole_or_a_ragged_size_in_a_directory_is_corruption),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
