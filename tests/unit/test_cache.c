/*
 * test_cache.c - the buffer cache: one buffer per block, zero-filled new
 * blocks, write-back of dirty buffers, eviction within the limit, write
 * images sealed with checksums, verification of directory blocks when read
 * and again after another role has had them, and the edge of the image.
 */
#include "config.h"
#include "testutil.h"
#include "sufs_int.h"
#include "engine/deps_priv.h"  /* deps_image(): the bytes a write would carry */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A data block far from the metadata of the 16 MiB, 4 KiB-block test image. */
#define FREE_AREA 1000u

/* The bytes a write of b would carry: its write image, sealed. */
static void write_image(struct sufs_fs *fs, struct buf *b, uint8_t *img)
{
	unsigned undone;

	deps_image(fs, b, img, &undone);
	cache_seal(fs, b, img);
}

static struct sufs_fs *fs_of(void **state)
{
	return ((struct tfs *)*state)->fs;
}

/* Replace the cache by the smallest one there is (64 buffers). */
static void shrink_cache(struct sufs_fs *fs)
{
	assert_int_equal(sufs_sync(fs), 0);
	assert_int_equal(fs->cache.dirty, 0);
	cache_destroy(fs);
	assert_int_equal(cache_init(fs, 0, deps_buf_extra()), 0);
	fs->cache.write_back = cache_writeback; /* as the file system set it up */
	assert_int_equal(fs->cache.limit, 64);
}

static struct buf *cached(struct sufs_fs *fs, uint64_t blk)
{
	struct buf *b;

	for (b = fs->cache.lru.next; b != &fs->cache.lru; b = b->next)
		if (b->blk == blk)
			return b;
	return NULL;
}

/* Read the blocks [first, first + n) as type, one after another, releasing
 * each; the cache never grows past its limit of 64 on the way. */
static void read_through(struct sufs_fs *fs, uint64_t first, uint64_t n, enum buf_type type)
{
	struct buf *b;
	uint64_t blk;

	for (blk = first; blk < first + n; blk++) {
		assert_int_equal(buf_get(fs, blk, type, &b), 0);
		buf_put(fs, b);
		assert_true(fs->cache.count <= 64);
	}
}

static void dev_block(struct sufs_fs *fs, uint64_t blk, uint8_t *out)
{
	assert_int_equal(sufs_dev_read(fs->dev, blk * fs->bsize, out, fs->bsize), 0);
}

/* Make blk dirty in the cache with the pattern `seed`. */
static void dirty_block(struct sufs_fs *fs, uint64_t blk, uint32_t seed)
{
	struct buf *b;

	assert_int_equal(buf_get_new(fs, blk, BUF_DATA, &b), 0);
	buf_update(fs, b, 0, fs->bsize, UPD_DATA, NULL);
	tu_pattern_fill(b->data, fs->bsize, seed, 0);
	buf_put(fs, b);
}

static void buf_get_returns_the_same_buffer_for_the_same_block(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	struct buf *a, *b, *c;
	size_t count = fs->cache.count;

	assert_int_equal(buf_get(fs, FREE_AREA, BUF_RAW, &a), 0);
	assert_int_equal(buf_get(fs, FREE_AREA, BUF_DATA, &b), 0);
	assert_ptr_equal(a, b);
	assert_int_equal(a->blk, FREE_AREA);
	assert_int_equal(a->refs, 2);
	assert_int_equal(fs->cache.count, count + 1);
	assert_int_equal(buf_get(fs, FREE_AREA + 1, BUF_DATA, &c), 0);
	assert_ptr_not_equal(c, a);
	assert_int_equal(fs->cache.count, count + 2);
	buf_put(fs, a);
	buf_put(fs, b);
	buf_put(fs, c);
	assert_int_equal(a->refs, 0);
}

static void buf_get_new_gives_zeros_without_reading_the_disk(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint8_t *pat = malloc(fs->bsize);
	uint64_t reads;
	struct buf *b, *b2;
	uint32_t i;

	assert_non_null(pat);
	tu_pattern_fill(pat, fs->bsize, 11, 0);
	assert_int_equal(sufs_dev_write(fs->dev, FREE_AREA * fs->bsize, pat, fs->bsize), 0);
	assert_int_equal(sufs_dev_write(fs->dev, (FREE_AREA + 1) * fs->bsize, pat, fs->bsize), 0);

	reads = fs->dev->reads;
	assert_int_equal(buf_get_new(fs, FREE_AREA, BUF_DATA, &b), 0);
	assert_int_equal(fs->dev->reads, reads);
	for (i = 0; i < fs->bsize; i++)
		assert_int_equal(b->data[i], 0);
	buf_put(fs, b);

	/* a cached block with contents is cleared too */
	assert_int_equal(buf_get(fs, FREE_AREA + 1, BUF_DATA, &b), 0);
	assert_int_equal(fs->dev->reads, reads + 1);
	assert_memory_equal(b->data, pat, fs->bsize);
	assert_int_equal(buf_get_new(fs, FREE_AREA + 1, BUF_DATA, &b2), 0);
	assert_ptr_equal(b2, b);
	for (i = 0; i < fs->bsize; i++)
		assert_int_equal(b->data[i], 0);
	buf_put(fs, b);
	buf_put(fs, b2);
	free(pat);
}

static void sync_writes_dirty_buffers_gathering_consecutive_blocks(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint8_t *disk = malloc(fs->bsize);
	static const uint64_t blks[] = { FREE_AREA + 2, FREE_AREA, FREE_AREA + 10, FREE_AREA + 1 };
	uint64_t writes, bytes, stat_writes;
	struct sufs_stats st;
	unsigned i;

	assert_non_null(disk);
	assert_int_equal(sufs_sync(fs), 0);
	sufs_get_stats(fs, &st);
	stat_writes = st.block_writes;
	for (i = 0; i < 4; i++)
		dirty_block(fs, blks[i], 20 + i);
	assert_int_equal(fs->cache.dirty, 4);
	writes = fs->dev->writes;
	bytes = fs->dev->bytes_written;

	assert_int_equal(sufs_sync(fs), 0);
	/* 1000-1002, then 1010, then the superblock */
	assert_int_equal(fs->dev->writes - writes, 3);
	assert_int_equal(fs->dev->bytes_written - bytes, 4 * fs->bsize + SUFS_SB_SIZE);
	assert_int_equal(fs->cache.dirty, 0);
	sufs_get_stats(fs, &st);
	assert_int_equal(st.block_writes - stat_writes, 4);
	assert_int_equal(st.dirty_blocks, 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(cached(fs, blks[i])->dirty, 0);
		dev_block(fs, blks[i], disk);
		assert_int_equal(tu_pattern_check(disk, fs->bsize, 20 + i, 0), -1);
	}

	/* nothing dirty: no block written, only the superblock */
	writes = fs->dev->writes;
	assert_int_equal(sufs_sync(fs), 0);
	assert_int_equal(fs->dev->writes - writes, 1);
	sufs_get_stats(fs, &st);
	assert_int_equal(st.block_writes - stat_writes, 4);
	free(disk);
}

static void eviction_keeps_the_cache_within_its_limit(void **state)
{
	struct sufs_fs *fs = fs_of(state);

	shrink_cache(fs);
	read_through(fs, FREE_AREA, 300, BUF_RAW);
	/* eviction frees a sixteenth of the cache at a time */
	assert_true(fs->cache.count >= 64 - 64 / 16);
	/* the newest are kept, the oldest went */
	assert_non_null(cached(fs, FREE_AREA + 299));
	assert_null(cached(fs, FREE_AREA));
}

static void eviction_never_drops_a_dirty_or_referenced_buffer(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	struct buf *held, *b;
	uint8_t *before = malloc(fs->bsize);

	assert_non_null(before);
	shrink_cache(fs);
	assert_int_equal(buf_get(fs, FREE_AREA, BUF_DATA, &held), 0);
	memcpy(before, held->data, fs->bsize);
	dirty_block(fs, FREE_AREA + 1, 31);

	read_through(fs, FREE_AREA + 100, 300, BUF_RAW);
	assert_ptr_equal(cached(fs, FREE_AREA), held);
	assert_int_equal(held->refs, 1);
	assert_memory_equal(held->data, before, fs->bsize);
	b = cached(fs, FREE_AREA + 1);
	assert_non_null(b);
	assert_int_equal(b->dirty, 1);
	assert_int_equal(tu_pattern_check(b->data, fs->bsize, 31, 0), -1);
	buf_put(fs, held);
	free(before);
}

/* Files' data goes before the blocks of the tree: an indirect block read
 * before 300 data blocks is still there, the oldest data is not; with no
 * clean data left, the oldest of the rest goes. */
static void eviction_frees_file_data_before_the_blocks_of_the_tree(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	struct buf *b;

	shrink_cache(fs);
	assert_int_equal(buf_get(fs, FREE_AREA, BUF_IND, &b), 0);
	buf_put(fs, b);
	read_through(fs, FREE_AREA + 100, 300, BUF_DATA);
	assert_non_null(cached(fs, FREE_AREA));
	assert_null(cached(fs, FREE_AREA + 100));
	assert_non_null(cached(fs, FREE_AREA + 399));
	read_through(fs, FREE_AREA + 1000, 300, BUF_IND);
	assert_null(cached(fs, FREE_AREA));
	assert_non_null(cached(fs, FREE_AREA + 1299));
}

static void a_cache_full_of_dirty_buffers_writes_them_back_to_make_room(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint8_t *disk = malloc(fs->bsize);
	struct buf *b;
	uint64_t blk;

	assert_non_null(disk);
	shrink_cache(fs);
	for (blk = FREE_AREA; blk < FREE_AREA + 64; blk++)
		dirty_block(fs, blk, (uint32_t)blk);
	assert_int_equal(fs->cache.count, 64);
	assert_int_equal(fs->cache.dirty, 64);

	assert_int_equal(buf_get(fs, FREE_AREA + 500, BUF_RAW, &b), 0);
	buf_put(fs, b);
	assert_true(fs->cache.count <= 64);
	assert_int_equal(fs->cache.dirty, 0);
	for (blk = FREE_AREA; blk < FREE_AREA + 64; blk++) {
		dev_block(fs, blk, disk);
		assert_int_equal(tu_pattern_check(disk, fs->bsize, (uint32_t)blk, 0), -1);
	}
	free(disk);
}

/* Deferred work that changes the first byte of a block, as a deferred free
 * changes a bitmap block. */
struct later_change {
	uint64_t blk;
	int ran;
};

static int change_block_later(struct sufs_fs *fs, void *arg)
{
	struct later_change *lc = arg;
	struct buf *b;

	if (!fs)
		return 0;
	assert_int_equal(buf_get(fs, lc->blk, BUF_DATA, &b), 0);
	buf_update(fs, b, 0, 1, UPD_DATA, NULL);
	b->data[0] ^= 0xff;
	buf_put(fs, b);
	lc->ran = 1;
	return 0;
}

/*
 * A miss of a full cache writes back, and the epoch runs deferred work,
 * which may read the very block that missed (a free returning a bit to the
 * bitmap block an allocation was reading).  The miss must then take that
 * buffer, not read a second one from the disk: two buffers of one block
 * both go out, the older bytes may land last, and a bitmap bit the engine
 * counts as on disk is not (the crash harness found a pointer on disk to a
 * block marked free this way).
 */
static void a_block_read_by_the_write_back_of_its_own_miss_has_one_buffer(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint8_t *disk = malloc(fs->bsize);
	struct later_change lc = { FREE_AREA + 500, 0 };
	struct buf *b, *x;
	uint64_t blk;
	unsigned copies = 0;
	char why[256];
	upd_id id;

	assert_non_null(disk);
	shrink_cache(fs);
	tu_pattern_fill(disk, fs->bsize, 7, 0);
	assert_int_equal(sufs_dev_write(fs->dev, lc.blk * fs->bsize, disk, fs->bsize), 0);
	/* the work waits for an update of the first dirty block */
	assert_int_equal(buf_get_new(fs, FREE_AREA, BUF_DATA, &b), 0);
	id = buf_update(fs, b, 0, fs->bsize, UPD_DATA, NULL);
	tu_pattern_fill(b->data, fs->bsize, FREE_AREA, 0);
	buf_put(fs, b);
	assert_int_equal(deps_defer(fs, &id, 1, change_block_later, &lc), 0);
	assert_int_equal(lc.ran, 0);
	for (blk = FREE_AREA + 1; blk < FREE_AREA + 64; blk++)
		dirty_block(fs, blk, (uint32_t)blk);
	assert_int_equal(fs->cache.count, 64);
	assert_int_equal(fs->cache.dirty, 64);

	assert_int_equal(buf_get(fs, lc.blk, BUF_DATA, &b), 0);
	assert_int_equal(lc.ran, 1);
	for (x = fs->cache.lru.next; x != &fs->cache.lru; x = x->next)
		copies += x->blk == lc.blk;
	assert_int_equal(copies, 1);
	assert_ptr_equal(cache_lookup(fs, lc.blk), b);
	assert_int_equal(b->data[0], (uint8_t)~tu_pattern_byte(7, 0));
	assert_int_equal(tu_pattern_check(b->data + 1, fs->bsize - 1, 7, 1), -1);
	assert_int_equal(deps_check(fs, why, sizeof(why)), 0);

	/* a change of the block after the deferred one: both reach the disk */
	buf_update(fs, b, 1, 1, UPD_DATA, NULL);
	b->data[1] ^= 0xff;
	buf_put(fs, b);
	assert_int_equal(sufs_sync(fs), 0);
	dev_block(fs, lc.blk, disk);
	assert_int_equal(disk[0], (uint8_t)~tu_pattern_byte(7, 0));
	assert_int_equal(disk[1], (uint8_t)~tu_pattern_byte(7, 1));
	assert_int_equal(tu_pattern_check(disk + 2, fs->bsize - 2, 7, 2), -1);
	free(disk);
}

static void cache_grows_past_its_limit_only_while_every_buffer_is_referenced(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	struct buf *held[65], *b;
	unsigned i;

	shrink_cache(fs);
	for (i = 0; i < 65; i++)
		assert_int_equal(buf_get(fs, FREE_AREA + i, BUF_RAW, &held[i]), 0);
	assert_int_equal(fs->cache.count, 65);
	for (i = 0; i < 65; i++)
		buf_put(fs, held[i]);
	assert_int_equal(buf_get(fs, FREE_AREA + 100, BUF_RAW, &b), 0);
	buf_put(fs, b);
	assert_true(fs->cache.count <= 64);
}

/* An empty directory block: one free entry up to the tail. */
static void empty_dir_block(struct sufs_fs *fs, struct buf *b)
{
	buf_update(fs, b, 0, fs->bsize, UPD_MKDIR, NULL);
	memset(b->data, 0, fs->bsize);
	put16(b->data + DE_RECLEN, (uint16_t)(fs->bsize - SUFS_DIR_TAIL_SIZE));
}

static void write_image_of_a_directory_block_carries_its_tail_checksum(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t bs = fs->bsize;
	uint8_t *img = malloc(bs), *disk = malloc(bs);
	struct buf *b;

	assert_non_null(img);
	assert_non_null(disk);
	assert_int_equal(buf_get_new(fs, FREE_AREA, BUF_DIR, &b), 0);
	empty_dir_block(fs, b);
	write_image(fs, b, img);
	assert_memory_equal(img, b->data, bs - SUFS_DIR_TAIL_SIZE);
	assert_int_equal(get32(img + bs - 8), DIR_TAIL_MAGIC);
	assert_int_equal(get32(img + bs - 4), sufs_dirblock_csum(img, bs, FREE_AREA));

	/* what reaches the disk verifies; so does it after another change */
	assert_int_equal(sufs_sync(fs), 0);
	dev_block(fs, FREE_AREA, disk);
	assert_int_equal(get32(disk + bs - 4), sufs_dirblock_csum(disk, bs, FREE_AREA));
	buf_update(fs, b, 100, 1, UPD_DIRADD, NULL);
	b->data[100] = 0x77;
	assert_int_equal(sufs_sync(fs), 0);
	dev_block(fs, FREE_AREA, disk);
	assert_int_equal(disk[100], 0x77);
	assert_int_equal(get32(disk + bs - 8), DIR_TAIL_MAGIC);
	assert_int_equal(get32(disk + bs - 4), sufs_dirblock_csum(disk, bs, FREE_AREA));
	buf_put(fs, b);
	free(img);
	free(disk);
}

static void write_image_of_an_inode_table_block_seals_each_inode_with_its_number(void **state)
{
	struct tfs *t = *state;
	struct sufs_mkfs_opts o;
	struct sufs_fs *fs;
	struct sufs_group_layout l;
	struct sufs_inode in;
	struct buf *b;
	uint8_t *img, *disk;
	uint32_t ipg, ino, slot, i;
	uint64_t blk;

	/* 8 groups of 1 KiB blocks: an inode table block that is not the first
	 * of a group that is not the first */
	tu_destroy(t);
	tu_default_opts(&o, 1024);
	o.blocks_per_group = 1024;
	tu_make_opts(t, 8u << 20, &o);
	tu_reopen(t, SUFS_OPEN_RDWR);
	fs = t->fs;
	ipg = fs->sb.inodes_per_group;
	ino = 2 * ipg + fs->inodes_per_block + 2;       /* group 2, table block 1, slot 1 */
	slot = 1;
	sufs_group_layout(&fs->sb, 2, &l);
	blk = l.inode_table + 1;

	memset(&in, 0, sizeof(in));
	in.mode = S_IFREG | 0600;
	in.links = 1;
	in.size = 5;
	assert_int_equal(inode_store(fs, ino, &in, UPD_INODEDEP, NULL, NULL), 0);
	/* change the mode behind the encoder's back: the checksum is now stale */
	assert_int_equal(buf_get(fs, blk, BUF_ITABLE, &b), 0);
	assert_int_equal(b->type, BUF_ITABLE);
	buf_update(fs, b, slot * SUFS_INODE_SIZE, 2, UPD_INODEDEP, NULL);
	put16(b->data + slot * SUFS_INODE_SIZE, S_IFREG | 0640);

	img = malloc(fs->bsize);
	disk = malloc(fs->bsize);
	assert_non_null(img);
	assert_non_null(disk);
	write_image(fs, b, img);
	assert_int_equal(get32(img + slot * SUFS_INODE_SIZE + 252),
			 sufs_inode_csum(img + slot * SUFS_INODE_SIZE, ino));
	assert_memory_equal(img + slot * SUFS_INODE_SIZE, b->data + slot * SUFS_INODE_SIZE, 252);
	for (i = 0; i < fs->inodes_per_block; i++)
		if (i != slot)
			assert_true(sufs_inode_is_zero(img + i * SUFS_INODE_SIZE));
	buf_put(fs, b);

	assert_int_equal(sufs_sync(fs), 0);
	dev_block(fs, blk, disk);
	assert_int_equal(get32(disk + slot * SUFS_INODE_SIZE + 252),
			 sufs_inode_csum(disk + slot * SUFS_INODE_SIZE, ino));
	tu_reopen(t, 0);
	assert_int_equal(sufs_inode_get(t->fs, ino, &in), 0);
	assert_int_equal(in.mode, S_IFREG | 0640);
	free(img);
	free(disk);
}

static void directory_block_with_a_bad_checksum_on_disk_is_marked_when_read(void **state)
{
	struct tfs *t = *state;
	uint64_t root_blk, sub_blk;
	uint32_t sub, ino;
	uint8_t *raw;
	struct sufs_dev *dev;
	struct buf *b;

	assert_int_equal(sufs_mkdir(t->fs, SUFS_ROOT_INO, "sub", 3, 0755, NULL, &sub), 0);
	assert_int_equal(sufs_bmap(t->fs, SUFS_ROOT_INO, 0, &root_blk), 0);
	assert_int_equal(sufs_bmap(t->fs, sub, 0, &sub_blk), 0);
	tu_close(t);

	/* flip a byte in the slack of "..": the entries stay well formed */
	assert_int_equal(sufs_dev_open(t->path, SUFS_DEV_RDWR, &dev), 0);
	raw = malloc(4096);
	assert_non_null(raw);
	assert_int_equal(sufs_dev_read(dev, root_blk * 4096, raw, 4096), 0);
	raw[200] ^= 0x01;
	assert_int_equal(sufs_dev_write(dev, root_blk * 4096, raw, 4096), 0);
	sufs_dev_close(dev);

	tu_reopen(t, 0);
	assert_int_equal(buf_get(t->fs, root_blk, BUF_DIR, &b), 0);
	assert_int_equal(b->csum_bad, 1);
	buf_put(t->fs, b);
	assert_int_equal(buf_get(t->fs, sub_blk, BUF_DIR, &b), 0);
	assert_int_equal(b->csum_bad, 0);
	buf_put(t->fs, b);
	assert_int_equal(sufs_lookup(t->fs, SUFS_ROOT_INO, "sub", 3, &ino), -SUFS_ECHECKSUM);
	assert_int_equal(sufs_lookup(t->fs, sub, "..", 2, &ino), 0);
	assert_int_equal(ino, SUFS_ROOT_INO);

	/* read raw first (a tool), then as a directory: still verified */
	tu_reopen(t, SUFS_OPEN_IGNORE_CSUM);
	assert_int_equal(sufs_block_read(t->fs, root_blk, raw), 0);
	assert_int_equal(buf_get(t->fs, root_blk, BUF_DIR, &b), 0);
	assert_int_equal(b->csum_bad, 1);
	buf_put(t->fs, b);
	/* and with IGNORE_CSUM the entries can still be read */
	assert_int_equal(sufs_lookup(t->fs, SUFS_ROOT_INO, "sub", 3, &ino), 0);
	assert_int_equal(ino, sub);
	free(raw);
}

/* A raw block write is what a debugger uses to damage an image on purpose:
 * it must reach the disk exactly as given, even when the block is read in
 * its real role before it is written. */
static void raw_block_write_goes_out_unsealed_even_after_the_block_is_read_as_inodes(void **state)
{
	struct tfs *t = *state;
	struct sufs_fs *fs = t->fs;
	struct sufs_group_layout l;
	struct sufs_inode in;
	uint8_t raw[4096];
	uint32_t off = (SUFS_ROOT_INO - 1) * SUFS_INODE_SIZE;

	assert_int_equal(fs->bsize, sizeof(raw));
	sufs_group_layout(&fs->sb, 0, &l);
	assert_int_equal(sufs_block_read(fs, l.inode_table, raw), 0);
	raw[off + 8] ^= 0x01; /* the root's uid: its checksum no longer matches */
	assert_int_equal(sufs_block_write(fs, l.inode_table, raw), 0);
	assert_int_equal(sufs_inode_get(fs, SUFS_ROOT_INO, &in), -SUFS_ECHECKSUM);
	tu_reopen(t, 0);
	assert_int_equal(sufs_inode_get(t->fs, SUFS_ROOT_INO, &in), -SUFS_ECHECKSUM);
	assert_int_equal(in.uid, 1);
}

static void raw_block_write_of_a_directory_block_stays_unsealed_after_a_lookup(void **state)
{
	struct tfs *t = *state;
	struct sufs_fs *fs = t->fs;
	uint8_t raw[4096];
	uint64_t blk;
	uint32_t ino;

	assert_int_equal(fs->bsize, sizeof(raw));
	assert_int_equal(sufs_bmap(fs, SUFS_ROOT_INO, 0, &blk), 0);
	assert_int_equal(sufs_block_read(fs, blk, raw), 0);
	raw[sizeof(raw) - 1] ^= 0x01; /* the tail checksum */
	assert_int_equal(sufs_block_write(fs, blk, raw), 0);
	(void)sufs_lookup(fs, SUFS_ROOT_INO, "..", 2, &ino);
	tu_reopen(t, 0);
	assert_int_equal(sufs_block_read(t->fs, blk, raw), 0);
	assert_int_not_equal(get32(raw + sizeof(raw) - 4),
			     sufs_dirblock_csum(raw, sizeof(raw), blk));
	assert_int_equal(sufs_lookup(t->fs, SUFS_ROOT_INO, "..", 2, &ino), -SUFS_ECHECKSUM);
}

static void raw_block_write_reaches_the_disk_exactly_as_given(void **state)
{
	struct tfs *t = *state;
	struct sufs_fs *fs = t->fs;
	struct sufs_group_layout l;
	struct sufs_inode in;
	uint8_t raw[4096];
	uint32_t off = (SUFS_ROOT_INO - 1) * SUFS_INODE_SIZE;

	assert_int_equal(fs->bsize, sizeof(raw));
	sufs_group_layout(&fs->sb, 0, &l);
	assert_int_equal(sufs_block_read(fs, l.inode_table, raw), 0);
	raw[off + 8] ^= 0x01;
	assert_int_equal(sufs_block_write(fs, l.inode_table, raw), 0);
	tu_reopen(t, 0);
	assert_int_equal(sufs_inode_get(t->fs, SUFS_ROOT_INO, &in), -SUFS_ECHECKSUM);
	assert_int_equal(in.uid, 1);
	assert_int_equal(in.mode, S_IFDIR | 0755);
}

/* A record length no entry can have (and a walk would jump past the end). */
static const uint8_t bad_reclen[2] = { 0xff, 0xff };

/*
 * On a damaged image a file's block pointer may name a directory's block.
 * A write through the file then changes the directory's bytes in the
 * cache: the directory's next walk must find them malformed, not trust the
 * check made when the block was read (a record length of 0 would loop
 * forever, a long name past the end would read out of bounds).
 */
static void a_directory_block_written_as_a_files_data_is_checked_again(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	struct sufs_inode in;
	uint64_t blk;
	uint32_t f, ino;

	assert_int_equal(sufs_create(fs, SUFS_ROOT_INO, "f", 1, 0644, NULL, &f), 0);
	assert_int_equal(sufs_write(fs, f, 0, "x", 1), 0);
	assert_int_equal(sufs_bmap(fs, SUFS_ROOT_INO, 0, &blk), 0);
	assert_int_equal(sufs_inode_get(fs, f, &in), 0);
	in.block[0] = blk; /* the damage */
	assert_int_equal(sufs_inode_put(fs, f, &in), 0);
	assert_int_equal(sufs_lookup(fs, SUFS_ROOT_INO, "f", 1, &ino), 0);
	assert_int_equal(cached(fs, blk)->type, BUF_DIR);

	assert_int_equal(sufs_write(fs, f, DE_RECLEN, bad_reclen, 2), 0);
	assert_int_equal(sufs_lookup(fs, SUFS_ROOT_INO, "f", 1, &ino), -SUFS_ECORRUPT);
	assert_int_equal(sufs_create(fs, SUFS_ROOT_INO, "g", 1, 0644, NULL, &ino),
			 -SUFS_ECORRUPT);
	assert_int_equal(cached(fs, blk)->type, BUF_DIR); /* still sealed as one */
}

/* The same when a raw write (sufs-debug -w) breaks a directory block. */
static void a_directory_block_broken_by_a_raw_write_is_checked_again(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint8_t raw[4096], old[2];
	uint64_t blk;
	uint32_t ino;

	assert_int_equal(fs->bsize, sizeof(raw));
	assert_int_equal(sufs_bmap(fs, SUFS_ROOT_INO, 0, &blk), 0);
	assert_int_equal(sufs_lookup(fs, SUFS_ROOT_INO, "..", 2, &ino), 0);
	assert_int_equal(sufs_block_read(fs, blk, raw), 0);
	memcpy(old, raw + DE_RECLEN, 2);
	memcpy(raw + DE_RECLEN, bad_reclen, 2);
	assert_int_equal(sufs_block_write(fs, blk, raw), 0);
	assert_int_equal(sufs_lookup(fs, SUFS_ROOT_INO, "..", 2, &ino), -SUFS_ECORRUPT);
	memcpy(raw + DE_RECLEN, old, 2); /* as it was */
	assert_int_equal(sufs_block_write(fs, blk, raw), 0);
	assert_int_equal(sufs_lookup(fs, SUFS_ROOT_INO, "..", 2, &ino), 0);
	assert_int_equal(ino, SUFS_ROOT_INO);
}

static void blocks_beyond_the_image_are_refused_as_corrupt(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint64_t n = fs->sb.blocks_count;
	uint8_t *raw = malloc(fs->bsize);
	struct buf *b = NULL;
	size_t count = fs->cache.count;

	assert_non_null(raw);
	assert_int_equal(buf_get(fs, n, BUF_RAW, &b), -SUFS_ECORRUPT);
	assert_int_equal(buf_get(fs, n + 1000, BUF_DIR, &b), -SUFS_ECORRUPT);
	assert_int_equal(buf_get(fs, UINT64_MAX, BUF_IND, &b), -SUFS_ECORRUPT);
	assert_int_equal(buf_get_new(fs, n, BUF_DATA, &b), -SUFS_ECORRUPT);
	assert_null(b);
	assert_int_equal(fs->cache.count, count);
	assert_int_equal(sufs_block_read(fs, n, raw), -EINVAL);
	assert_int_equal(buf_get(fs, n - 1, BUF_RAW, &b), 0);
	buf_put(fs, b);
	free(raw);
}

/*
 * A pool hands out objects that do not overlap, through many chunks (past
 * the size where it grows by 2 MiB ones), takes freed ones back for reuse,
 * and with no_huge keeps to small chunks; pool_drain() leaves it empty
 * and usable again.
 */
static void fill(uint8_t **obj, size_t n, size_t size, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		memset(obj[i], (int)((i * 31 + seed) & 0xff), size);
}

static void check_fill(uint8_t **obj, size_t n, size_t size, uint32_t seed)
{
	size_t i, k;

	for (i = 0; i < n; i++)
		for (k = 0; k < size; k++)
			if (obj[i][k] != (uint8_t)((i * 31 + seed) & 0xff))
				fail_msg("object %zu byte %zu was overwritten", i, k);
}

static void a_pool_hands_out_distinct_objects_and_reuses_freed_ones(void **state)
{
	static const size_t sizes[] = { 48, 88, 4096 };
	enum { N = 3000 };
	uint8_t **obj = calloc(N, sizeof(*obj));
	size_t s, i, n;
	int no_huge;

	(void)state;
	assert_non_null(obj);
	for (no_huge = 0; no_huge <= 1; no_huge++) {
		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			struct pool p = { .no_huge = no_huge };
			size_t size = sizes[s];

			n = size < 1024 ? N : N / 4; /* 12 MiB of blocks */
			for (i = 0; i < n; i++) {
				obj[i] = pool_get(&p, size);
				assert_non_null(obj[i]);
				assert_int_equal((uintptr_t)obj[i] % 8, 0);
			}
			fill(obj, n, size, (uint32_t)s);
			check_fill(obj, n, size, (uint32_t)s);
			/* every other one back, then again: the others keep
			 * their bytes */
			for (i = 0; i < n; i += 2)
				pool_put(&p, obj[i]);
			for (i = 0; i < n; i += 2) {
				obj[i] = pool_get(&p, size);
				assert_non_null(obj[i]);
				memset(obj[i], (int)((i * 31 + s) & 0xff), size);
			}
			check_fill(obj, n, size, (uint32_t)s);
			/* all back, as the cache and the engine do before the
			 * drain (under AddressSanitizer each is its own malloc) */
			for (i = 0; i < n; i++)
				pool_put(&p, obj[i]);
			pool_drain(&p);
			assert_null(p.head);
			assert_null(p.chunks);
			assert_int_equal(p.bytes, 0);
			assert_int_equal(p.no_huge, no_huge);
			obj[0] = pool_get(&p, size);
			assert_non_null(obj[0]);
			pool_put(&p, obj[0]);
			pool_drain(&p);
		}
	}
	free(obj);
}

#define T4(f) cmocka_unit_test_setup_teardown(f, tu_setup_4k, tu_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T4(buf_get_returns_the_same_buffer_for_the_same_block),
		T4(buf_get_new_gives_zeros_without_reading_the_disk),
		T4(sync_writes_dirty_buffers_gathering_consecutive_blocks),
		T4(eviction_keeps_the_cache_within_its_limit),
		T4(eviction_never_drops_a_dirty_or_referenced_buffer),
		T4(eviction_frees_file_data_before_the_blocks_of_the_tree),
		T4(a_cache_full_of_dirty_buffers_writes_them_back_to_make_room),
		T4(a_block_read_by_the_write_back_of_its_own_miss_has_one_buffer),
		T4(cache_grows_past_its_limit_only_while_every_buffer_is_referenced),
		T4(write_image_of_a_directory_block_carries_its_tail_checksum),
		T4(write_image_of_an_inode_table_block_seals_each_inode_with_its_number),
		T4(directory_block_with_a_bad_checksum_on_disk_is_marked_when_read),
		T4(raw_block_write_reaches_the_disk_exactly_as_given),
		T4(raw_block_write_goes_out_unsealed_even_after_the_block_is_read_as_inodes),
		T4(raw_block_write_of_a_directory_block_stays_unsealed_after_a_lookup),
		T4(a_directory_block_written_as_a_files_data_is_checked_again),
		T4(a_directory_block_broken_by_a_raw_write_is_checked_again),
		T4(blocks_beyond_the_image_are_refused_as_corrupt),
		cmocka_unit_test(a_pool_hands_out_distinct_objects_and_reuses_freed_ones),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
