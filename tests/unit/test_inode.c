/*
 * test_inode.c - inodes and block maps.  With 1 KiB blocks an indirect block
 * holds 128 pointers, so logical blocks 0-11 are direct, 12-139 single
 * indirect, 140-16523 double and 16524 on triple indirect: every level is
 * reached by a sparse file of a few blocks.
 */
#include "config.h"
#include "testutil.h"
#include "sufs_int.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#define BS      1024u
#define PTRS    (BS / 8)
#define L_SINGLE 12u
#define L_DOUBLE (12u + PTRS)
#define L_TRIPLE (12u + PTRS + PTRS * PTRS)

/* Logical blocks written by make_sparse(): the first and last of each level. */
static const uint64_t sparse_lblks[] = {
	0, 11, L_SINGLE, L_DOUBLE - 1, L_DOUBLE, L_TRIPLE - 1, L_TRIPLE,
};
#define NSPARSE (sizeof(sparse_lblks) / sizeof(sparse_lblks[0]))

static struct sufs_fs *fs_of(void **state)
{
	return ((struct tfs *)*state)->fs;
}

/* A file with one block of pattern (seeded by its number) at each of sparse_lblks. */
static uint32_t make_sparse(struct sufs_fs *fs)
{
	uint8_t blk[BS];
	uint32_t ino;
	unsigned i;

	assert_int_equal(sufs_create(fs, SUFS_ROOT_INO, "sparse", 6, 0644, NULL, &ino), 0);
	for (i = 0; i < NSPARSE; i++) {
		tu_pattern_fill(blk, BS, (uint32_t)sparse_lblks[i], 0);
		assert_int_equal(sufs_write(fs, ino, sparse_lblks[i] * BS, blk, BS), 0);
	}
	return ino;
}

/* Pointer n of an indirect block, read raw. */
static uint64_t ptr_at(struct sufs_fs *fs, uint64_t blk, unsigned n)
{
	uint8_t raw[BS];

	assert_true(blk != 0);
	assert_int_equal(sufs_block_read(fs, blk, raw), 0);
	return get64(raw + 8 * n);
}

static uint64_t bmap(struct sufs_fs *fs, uint32_t ino, uint64_t lblk)
{
	uint64_t pblk = 0xdead;

	assert_int_equal(sufs_bmap(fs, ino, lblk, &pblk), 0);
	return pblk;
}

static void bmap_follows_direct_single_double_and_triple_indirect_pointers(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	struct sufs_inode in;
	struct sufs_stat st;
	uint8_t raw[BS];
	uint32_t ino = make_sparse(fs);
	uint64_t tind_l2;
	unsigned i;

	assert_int_equal(fs->bsize, BS);
	assert_int_equal(sufs_inode_get(fs, ino, &in), 0);
	assert_int_equal(bmap(fs, ino, 0), in.block[0]);
	assert_int_equal(bmap(fs, ino, 11), in.block[11]);
	assert_int_equal(bmap(fs, ino, L_SINGLE), ptr_at(fs, in.block[SUFS_IND], 0));
	assert_int_equal(bmap(fs, ino, L_DOUBLE - 1), ptr_at(fs, in.block[SUFS_IND], PTRS - 1));
	assert_int_equal(bmap(fs, ino, L_DOUBLE),
			 ptr_at(fs, ptr_at(fs, in.block[SUFS_DIND], 0), 0));
	assert_int_equal(bmap(fs, ino, L_TRIPLE - 1),
			 ptr_at(fs, ptr_at(fs, in.block[SUFS_DIND], PTRS - 1), PTRS - 1));
	tind_l2 = ptr_at(fs, in.block[SUFS_TIND], 0);
	assert_int_equal(bmap(fs, ino, L_TRIPLE), ptr_at(fs, ptr_at(fs, tind_l2, 0), 0));

	/* each maps the block that holds its own data */
	for (i = 0; i < NSPARSE; i++) {
		assert_int_equal(sufs_block_read(fs, bmap(fs, ino, sparse_lblks[i]), raw), 0);
		assert_int_equal(tu_pattern_check(raw, BS, (uint32_t)sparse_lblks[i], 0), -1);
	}
	/* 7 data blocks; indirect: 1 single, 1 + 2 double, 1 + 1 + 1 triple */
	assert_int_equal(in.blocks, 14);
	assert_int_equal(sufs_stat(fs, ino, &st), 0);
	assert_int_equal(st.size, (L_TRIPLE + 1) * BS);
	assert_int_equal(st.blocks, 14);
}

static void holes_map_to_zero_and_read_as_zeros(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t ino = make_sparse(fs);
	uint8_t buf[3 * BS];
	size_t done = 0;
	unsigned i;

	assert_int_equal(bmap(fs, ino, 1), 0);
	assert_int_equal(bmap(fs, ino, 10), 0);
	assert_int_equal(bmap(fs, ino, L_SINGLE + 1), 0);
	assert_int_equal(bmap(fs, ino, L_DOUBLE + 1), 0);
	assert_int_equal(bmap(fs, ino, L_DOUBLE + PTRS), 0);    /* a missing level-1 block */
	assert_int_equal(bmap(fs, ino, L_TRIPLE + 1), 0);
	assert_int_equal(bmap(fs, ino, L_TRIPLE + PTRS * PTRS), 0);
	assert_int_equal(bmap(fs, ino, 1ull << 40), 0);        /* past the largest file */

	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(sufs_read(fs, ino, BS / 2, buf, sizeof(buf), &done), 0);
	assert_int_equal(done, sizeof(buf));
	assert_int_equal(tu_pattern_check(buf, BS / 2, 0, BS / 2), -1);
	for (i = BS / 2; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0);
}

static void direct_blocks_written_in_order_lie_next_to_each_other(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint8_t data[12 * BS];
	uint32_t ino;
	uint64_t first;
	unsigned i;

	tu_pattern_fill(data, sizeof(data), 5, 0);
	assert_int_equal(sufs_create(fs, SUFS_ROOT_INO, "seq", 3, 0644, NULL, &ino), 0);
	assert_int_equal(sufs_write(fs, ino, 0, data, sizeof(data)), 0);
	first = bmap(fs, ino, 0);
	for (i = 1; i < 12; i++)
		assert_int_equal(bmap(fs, ino, i), first + i);
}

struct visit {
	uint64_t lblk, pblk;
	int level, bad;
};

struct visits {
	struct visit v[64];
	unsigned n;
	unsigned stop_after;    /* 0: never stop */
};

static int record(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk, int level,
		  int bad, void *arg)
{
	struct visits *vs = arg;

	(void)fs;
	(void)ino;
	assert_true(vs->n < 64);
	vs->v[vs->n].lblk = lblk;
	vs->v[vs->n].pblk = pblk;
	vs->v[vs->n].level = level;
	vs->v[vs->n].bad = bad;
	vs->n++;
	return vs->stop_after && vs->n == vs->stop_after ? 77 : 0;
}

/* Index of the visit of (lblk, level), asserting there is exactly one. */
static unsigned find_visit(const struct visits *vs, uint64_t lblk, int level)
{
	unsigned i, found = vs->n, count = 0;

	for (i = 0; i < vs->n; i++) {
		if (vs->v[i].lblk == lblk && vs->v[i].level == level) {
			found = i;
			count++;
		}
	}
	if (count != 1)
		fail_msg("block %llu level %d visited %u times", (unsigned long long)lblk,
			 level, count);
	return found;
}

static void block_iterate_visits_every_data_and_indirect_block_exactly_once(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t ino = make_sparse(fs);
	struct sufs_inode in;
	struct visits vs = { .n = 0 };
	unsigned i, j;

	assert_int_equal(sufs_block_iterate(fs, ino, record, &vs), 0);
	assert_int_equal(sufs_inode_get(fs, ino, &in), 0);
	assert_int_equal(vs.n, 14);
	assert_int_equal(vs.n, in.blocks);
	for (i = 0; i < NSPARSE; i++) {
		unsigned k = find_visit(&vs, sparse_lblks[i], 0);
		assert_int_equal(vs.v[k].pblk, bmap(fs, ino, sparse_lblks[i]));
	}
	/* indirect blocks carry the first logical block they map */
	assert_int_equal(vs.v[find_visit(&vs, L_SINGLE, 1)].pblk, in.block[SUFS_IND]);
	assert_int_equal(vs.v[find_visit(&vs, L_DOUBLE, 2)].pblk, in.block[SUFS_DIND]);
	assert_int_equal(vs.v[find_visit(&vs, L_DOUBLE, 1)].pblk,
			 ptr_at(fs, in.block[SUFS_DIND], 0));
	assert_int_equal(vs.v[find_visit(&vs, L_DOUBLE + (PTRS - 1) * PTRS, 1)].pblk,
			 ptr_at(fs, in.block[SUFS_DIND], PTRS - 1));
	assert_int_equal(vs.v[find_visit(&vs, L_TRIPLE, 3)].pblk, in.block[SUFS_TIND]);
	assert_int_equal(vs.v[find_visit(&vs, L_TRIPLE, 2)].pblk,
			 ptr_at(fs, in.block[SUFS_TIND], 0));
	assert_int_equal(vs.v[find_visit(&vs, L_TRIPLE, 1)].pblk,
			 ptr_at(fs, ptr_at(fs, in.block[SUFS_TIND], 0), 0));
	for (i = 0; i < vs.n; i++) {
		assert_int_equal(vs.v[i].bad, 0);
		for (j = 0; j < i; j++)
			assert_int_not_equal(vs.v[i].pblk, vs.v[j].pblk);
	}
}

static void block_iterate_stops_when_the_callback_returns_nonzero(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t ino = make_sparse(fs);
	struct visits vs = { .n = 0, .stop_after = 3 };

	assert_int_equal(sufs_block_iterate(fs, ino, record, &vs), 77);
	assert_int_equal(vs.n, 3);
}

static void out_of_range_pointers_are_reported_bad_and_never_followed(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t ino = make_sparse(fs);
	struct sufs_inode in;
	struct visits vs = { .n = 0 };
	uint8_t buf[BS];
	size_t done;
	unsigned i, k;

	assert_int_equal(sufs_inode_get(fs, ino, &in), 0);
	in.block[3] = fs->sb.blocks_count + 5;  /* past the end of the image */
	in.block[SUFS_IND] = 1;                 /* a metadata block */
	in.block[SUFS_DIND] = UINT64_MAX;
	assert_int_equal(sufs_inode_put(fs, ino, &in), 0);

	assert_int_equal(sufs_bmap(fs, ino, 3, &(uint64_t){ 0 }), -SUFS_ECORRUPT);
	assert_int_equal(sufs_bmap(fs, ino, L_SINGLE, &(uint64_t){ 0 }), -SUFS_ECORRUPT);
	assert_int_equal(sufs_bmap(fs, ino, L_DOUBLE, &(uint64_t){ 0 }), -SUFS_ECORRUPT);
	assert_int_equal(sufs_read(fs, ino, 3 * BS, buf, BS, &done), -SUFS_ECORRUPT);
	/* the good parts still map */
	assert_int_equal(bmap(fs, ino, 0), in.block[0]);
	assert_int_not_equal(bmap(fs, ino, L_TRIPLE), 0);

	assert_int_equal(sufs_block_iterate(fs, ino, record, &vs), 0);
	k = find_visit(&vs, 3, 0);
	assert_int_equal(vs.v[k].bad, 1);
	assert_int_equal(vs.v[k].pblk, fs->sb.blocks_count + 5);
	k = find_visit(&vs, L_SINGLE, 1);
	assert_int_equal(vs.v[k].bad, 1);
	assert_int_equal(vs.v[k].pblk, 1);
	k = find_visit(&vs, L_DOUBLE, 2);
	assert_int_equal(vs.v[k].bad, 1);
	for (i = 0; i < vs.n; i++) {
		/* nothing under a bad pointer was visited */
		if (vs.v[i].level < 2 && vs.v[i].lblk >= L_DOUBLE && vs.v[i].lblk < L_TRIPLE)
			fail_msg("visited block %llu below a bad pointer",
				 (unsigned long long)vs.v[i].lblk);
		if (vs.v[i].level == 0 && vs.v[i].lblk >= L_SINGLE && vs.v[i].lblk < L_DOUBLE)
			fail_msg("visited block %llu below a bad pointer",
				 (unsigned long long)vs.v[i].lblk);
	}
	/* 0, 3 (bad), 11, IND (bad), DIND (bad), and the triple chain of 4 */
	assert_int_equal(vs.n, 9);
}

static void out_of_range_pointer_inside_an_indirect_block_is_corruption(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t ino = make_sparse(fs);
	struct sufs_inode in;
	struct visits vs = { .n = 0 };
	uint8_t raw[BS];
	unsigned k;

	assert_int_equal(sufs_inode_get(fs, ino, &in), 0);
	assert_int_equal(sufs_block_read(fs, in.block[SUFS_IND], raw), 0);
	put64(raw + 8 * 1, fs->sb.blocks_count);
	assert_int_equal(sufs_block_write(fs, in.block[SUFS_IND], raw), 0);

	assert_int_equal(sufs_bmap(fs, ino, L_SINGLE + 1, &(uint64_t){ 0 }), -SUFS_ECORRUPT);
	assert_int_not_equal(bmap(fs, ino, L_SINGLE), 0);
	assert_int_equal(sufs_block_iterate(fs, ino, record, &vs), 0);
	k = find_visit(&vs, L_SINGLE + 1, 0);
	assert_int_equal(vs.v[k].bad, 1);
	assert_int_equal(vs.v[k].pblk, fs->sb.blocks_count);
	assert_int_equal(vs.v[find_visit(&vs, L_SINGLE, 0)].bad, 0);
}

static void inode_with_a_bad_checksum_is_reported_and_still_returned(void **state)
{
	struct tfs *t = *state;
	struct sufs_group_layout l;
	struct sufs_inode in;
	struct sufs_stat st;
	struct sufs_dev *dev;
	uint8_t raw[BS];
	uint32_t ino, off;
	uint64_t blk;

	assert_int_equal(sufs_create(t->fs, SUFS_ROOT_INO, "f", 1, 0640, NULL, &ino), 0);
	sufs_group_layout(&t->fs->sb, (ino - 1) / t->fs->sb.inodes_per_group, &l);
	blk = l.inode_table + ((ino - 1) % t->fs->sb.inodes_per_group) / (BS / SUFS_INODE_SIZE);
	off = ((ino - 1) % (BS / SUFS_INODE_SIZE)) * SUFS_INODE_SIZE;
	tu_close(t);

	assert_int_equal(sufs_dev_open(t->path, SUFS_DEV_RDWR, &dev), 0);
	assert_int_equal(sufs_dev_read(dev, blk * BS, raw, BS), 0);
	assert_int_equal(get16(raw + off), S_IFREG | 0640);
	put64(raw + off + 16, 4242);            /* the size, checksum left alone */
	assert_int_equal(sufs_dev_write(dev, blk * BS, raw, BS), 0);
	sufs_dev_close(dev);

	tu_reopen(t, 0);
	memset(&in, 0, sizeof(in));
	assert_int_equal(sufs_inode_get(t->fs, ino, &in), -SUFS_ECHECKSUM);
	assert_int_equal(in.mode, S_IFREG | 0640);
	assert_int_equal(in.size, 4242);
	assert_int_equal(in.links, 1);
	assert_int_equal(sufs_stat(t->fs, ino, &st), -SUFS_ECHECKSUM);
	/* its neighbour, the root, is fine */
	assert_int_equal(sufs_inode_get(t->fs, SUFS_ROOT_INO, &in), 0);
}

/* An inode-table block's checksums are checked once, not at each load:
 * a damage made after the check (a raw write, as a debugger makes) must
 * still be seen, and an inode stored whole again loads cleanly. */
static void an_inode_damaged_after_its_block_was_checked_is_still_reported(void **state)
{
	struct tfs *t = *state;
	struct sufs_fs *fs = t->fs;
	struct sufs_group_layout l;
	struct sufs_inode in;
	uint8_t raw[BS];
	uint32_t ino, off;
	uint64_t blk;

	assert_int_equal(sufs_create(fs, SUFS_ROOT_INO, "f", 1, 0640, NULL, &ino), 0);
	sufs_group_layout(&fs->sb, (ino - 1) / fs->sb.inodes_per_group, &l);
	blk = l.inode_table + ((ino - 1) % fs->sb.inodes_per_group) / (BS / SUFS_INODE_SIZE);
	off = ((ino - 1) % (BS / SUFS_INODE_SIZE)) * SUFS_INODE_SIZE;
	assert_int_equal(sufs_inode_get(fs, ino, &in), 0); /* the block is checked */

	assert_int_equal(sufs_block_read(fs, blk, raw), 0);
	put64(raw + off + 16, 4242);            /* the size, checksum left alone */
	assert_int_equal(sufs_block_write(fs, blk, raw), 0);
	memset(&in, 0, sizeof(in));
	assert_int_equal(sufs_inode_get(fs, ino, &in), -SUFS_ECHECKSUM);
	assert_int_equal(in.size, 4242);
	assert_int_equal(sufs_inode_get(fs, ino, &in), -SUFS_ECHECKSUM); /* every time */

	in.size = 0;
	assert_int_equal(sufs_inode_put(fs, ino, &in), 0);
	assert_int_equal(sufs_inode_get(fs, ino, &in), 0);
	tu_reopen(t, 0);
	assert_int_equal(sufs_inode_get(t->fs, ino, &in), 0);
	assert_int_equal(in.mode, S_IFREG | 0640);
}

static void inode_numbers_outside_the_tables_are_invalid(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	struct sufs_inode in;

	assert_int_equal(sufs_inode_get(fs, 0, &in), -EINVAL);
	assert_int_equal(sufs_inode_get(fs, fs->sb.inodes_count + 1, &in), -EINVAL);
	assert_int_equal(sufs_inode_get(fs, UINT32_MAX, &in), -EINVAL);
	assert_int_equal(sufs_inode_put(fs, 0, &in), -EINVAL);
	assert_int_equal(sufs_bmap(fs, 0, 0, &(uint64_t){ 0 }), -EINVAL);
	/* the last inode exists and was never used: all zeros */
	memset(&in, 0xff, sizeof(in));
	assert_int_equal(sufs_inode_get(fs, fs->sb.inodes_count, &in), 0);
	assert_int_equal(in.mode, 0);
	assert_int_equal(in.block[0], 0);
	assert_int_equal(in.checksum, 0);
}

static void inode_put_stores_exactly_what_inode_get_returns(void **state)
{
	struct tfs *t = *state;
	struct sufs_inode in, out;
	uint32_t ino = 100;
	unsigned i;

	memset(&in, 0, sizeof(in));
	in.mode = S_IFCHR | 0600;
	in.links = 3;
	in.uid = 7;
	in.mtime = -5;
	in.rdev_major = 8;
	in.rdev_minor = 1;
	for (i = 0; i < SUFS_NBLOCKS; i++)
		in.block[i] = 0x0101010101010101ull * i;
	assert_int_equal(sufs_inode_put(t->fs, ino, &in), 0);
	tu_reopen(t, 0);
	assert_int_equal(sufs_inode_get(t->fs, ino, &out), 0);
	assert_int_equal(out.mode, in.mode);
	assert_int_equal(out.links, 3);
	assert_int_equal(out.uid, 7);
	assert_int_equal(out.mtime, -5);
	assert_int_equal(out.rdev_minor, 1);
	for (i = 0; i < SUFS_NBLOCKS; i++)
		assert_int_equal(out.block[i], in.block[i]);
	/* a device maps nothing, whatever its pointers say */
	assert_int_equal(bmap(t->fs, ino, 1), 0);
	assert_int_equal(sufs_inode_put(t->fs, ino, &in), -EROFS);
}

static void writes_past_the_largest_file_fail_with_efbig(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint64_t max = (12ull + PTRS + PTRS * PTRS + (uint64_t)PTRS * PTRS * PTRS) * BS;
	uint32_t ino;
	uint8_t byte = 1;

	assert_int_equal(sufs_create(fs, SUFS_ROOT_INO, "big", 3, 0644, NULL, &ino), 0);
	assert_int_equal(sufs_write(fs, ino, max, &byte, 1), -EFBIG);
	assert_int_equal(sufs_write(fs, ino, max - 1, &byte, 1), 0);
	assert_int_not_equal(bmap(fs, ino, max / BS - 1), 0);
	assert_int_equal(bmap(fs, ino, max / BS), 0);
}

struct freeing_walk {
	unsigned data, indirect;
};

/* Free every indirect block as it is visited, as fsck's clear_inode does. */
static int free_indirect(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
			 int level, int bad, void *arg)
{
	struct freeing_walk *w = arg;

	(void)ino; (void)lblk;
	assert_false(bad);
	if (level == 0) {
		w->data++;
		return 0;
	}
	w->indirect++;
	return free_block(fs, pblk);
}

/*
 * Found by fuzz_check: fsck cleared a directory whose hole it had filled
 * through a new indirect block, and the blocks under it stayed allocated.
 * The walk read the indirect block after the callback had freed it, and
 * freeing forgets the cached block, changes not yet written included, so
 * the walk found the zeros on disk.  The pointers must be read first.
 */
static void block_iterate_visits_what_an_indirect_block_maps_when_the_callback_frees_it(
	void **state)
{
	struct sufs_fs *fs = fs_of(state);
	struct freeing_walk w = { 0, 0 };
	uint32_t ino = make_sparse(fs); /* nothing of it is on disk yet */

	assert_int_equal(sufs_block_iterate(fs, ino, free_indirect, &w), 0);
	assert_int_equal(w.data, NSPARSE);
	assert_int_equal(w.data + w.indirect, 14); /* as block_iterate_visits_every_... */
}

#define T1(f) cmocka_unit_test_setup_teardown(f, tu_setup_1k, tu_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T1(bmap_follows_direct_single_double_and_triple_indirect_pointers),
		T1(holes_map_to_zero_and_read_as_zeros),
		T1(direct_blocks_written_in_order_lie_next_to_each_other),
		T1(block_iterate_visits_every_data_and_indirect_block_exactly_once),
		T1(block_iterate_stops_when_the_callback_returns_nonzero),
		T1(block_iterate_visits_what_an_indirect_block_maps_when_the_callback_frees_it),
		T1(out_of_range_pointers_are_reported_bad_and_never_followed),
		T1(out_of_range_pointer_inside_an_indirect_block_is_corruption),
		T1(inode_with_a_bad_checksum_is_reported_and_still_returned),
		T1(an_inode_damaged_after_its_block_was_checked_is_still_reported),
		T1(inode_numbers_outside_the_tables_are_invalid),
		T1(inode_put_stores_exactly_what_inode_get_returns),
		T1(writes_past_the_largest_file_fail_with_efbig),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
