/*
 * test_alloc.c - block and inode allocation: goals, filling groups, running
 * out, never handing out metadata, where new inodes go, and the summaries
 * that follow every bitmap bit.
 *
 * The image: 4 MiB of 1 KiB blocks in 4 groups of 1024 blocks and 64 inodes.
 * Groups 1 and 3 carry a backup superblock.
 */
#include "config.h"
#include "testutil.h"
#include "sufs_int.h"

#include <errno.h>
#include <stdlib.h>

static int setup_4groups(void **state)
{
	struct tfs *t = calloc(1, sizeof(*t));
	struct sufs_mkfs_opts o;

	if (!t)
		return -1;
	*state = t;
	tu_default_opts(&o, 1024);
	o.blocks_per_group = 1024;
	tu_make_opts(t, 4u << 20, &o);
	tu_reopen(t, SUFS_OPEN_RDWR);
	assert_int_equal(t->fs->sb.groups_count, 4);
	assert_int_equal(t->fs->sb.inodes_per_group, 64);
	return 0;
}

static struct sufs_fs *fs_of(void **state)
{
	return ((struct tfs *)*state)->fs;
}

static uint64_t first_data(struct sufs_fs *fs, uint32_t g)
{
	struct sufs_group_layout l;

	sufs_group_layout(&fs->sb, g, &l);
	return l.first_data;
}

/* The first block past group g's metadata area: where data goes first. */
static uint64_t data_start(struct sufs_fs *fs, uint32_t g)
{
	return first_data(fs, g) + fs->sb.blocks_per_group / 32;
}

static uint32_t group_of_block(struct sufs_fs *fs, uint64_t blk)
{
	return (uint32_t)(blk / fs->sb.blocks_per_group);
}

static uint32_t group_of_inode(struct sufs_fs *fs, uint32_t ino)
{
	return (ino - 1) / fs->sb.inodes_per_group;
}

static int is_set(struct sufs_fs *fs, enum sufs_bitmap which, uint64_t n)
{
	int set = -1;

	assert_int_equal(bitmap_test(fs, which, n, &set), 0);
	return set;
}

/* ---- blocks ---------------------------------------------------------------- */

static void alloc_block_returns_the_goal_when_it_is_free(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint64_t goal = data_start(fs, 2) + 10, blk = 0;
	uint32_t free2 = fs->groups[2].free_blocks;
	uint64_t free_all = fs->sb.free_blocks;

	assert_int_equal(is_set(fs, SUFS_BITMAP_BLOCK, goal), 0);
	assert_int_equal(alloc_block(fs, goal, 0, &blk, NULL), 0);
	assert_int_equal(blk, goal);
	assert_int_equal(is_set(fs, SUFS_BITMAP_BLOCK, goal), 1);
	assert_int_equal(fs->groups[2].free_blocks, free2 - 1);
	assert_int_equal(fs->sb.free_blocks, free_all - 1);
}

static void alloc_block_with_a_used_goal_takes_the_next_free_block_after_it(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint64_t goal = data_start(fs, 2) + 10, blk = 0;

	assert_int_equal(bitmap_set(fs, SUFS_BITMAP_BLOCK, goal + 1, 1, NULL), 1);
	assert_int_equal(alloc_block(fs, goal, 0, &blk, NULL), 0);
	assert_int_equal(blk, goal);
	assert_int_equal(alloc_block(fs, goal, 0, &blk, NULL), 0);
	assert_int_equal(blk, goal + 2);
}

/* A data block wanted among the group's own metadata goes past its
 * metadata area; an indirect, directory or attribute block goes to the
 * area (meta_goal()), whatever the goal in the group. */
static void data_goes_past_the_metadata_area_and_metadata_blocks_into_it(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	struct sufs_group_layout l;
	uint64_t blk = 0;

	sufs_group_layout(&fs->sb, 3, &l);
	assert_int_equal(alloc_block(fs, l.sb_block, 0, &blk, NULL), 0);
	assert_int_equal(blk, data_start(fs, 3));
	assert_int_equal(alloc_block(fs, l.inode_table + 1, 0, &blk, NULL), 0);
	assert_int_equal(blk, data_start(fs, 3) + 1);
	assert_int_equal(alloc_block(fs, first_data(fs, 3) + 3, 0, &blk, NULL), 0);
	assert_int_equal(blk, data_start(fs, 3) + 2);
	assert_int_equal(meta_goal(fs, l.end - 5), l.first_data);
	assert_int_equal(alloc_block(fs, meta_goal(fs, l.end - 5), 1, &blk, NULL), 0);
	assert_int_equal(blk, l.first_data);
	assert_int_equal(alloc_block(fs, meta_goal(fs, l.sb_block), 1, &blk, NULL), 0);
	assert_int_equal(blk, l.first_data + 1);
}

/* A full metadata area spills into the group's data; data takes the areas
 * only once every group's other blocks are in use. */
static void a_full_metadata_area_spills_and_data_takes_the_areas_last(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint64_t blk = 0, b, area = fs->sb.blocks_per_group / 32;
	uint32_t g;

	for (b = 0; b < area; b++) {
		assert_int_equal(alloc_block(fs, meta_goal(fs, first_data(fs, 1)), 1, &blk, NULL), 0);
		assert_int_equal(blk, first_data(fs, 1) + b);
	}
	assert_int_equal(alloc_block(fs, meta_goal(fs, first_data(fs, 1)), 1, &blk, NULL), 0);
	assert_int_equal(blk, data_start(fs, 1));
	/* every group's data past its area in use: data goes to an area */
	for (g = 0; g < fs->sb.groups_count; g++)
		for (b = data_start(fs, g); b < (g + 1) * (uint64_t)fs->sb.blocks_per_group; b++)
			bitmap_set(fs, SUFS_BITMAP_BLOCK, b, 1, NULL);
	assert_int_equal(alloc_block(fs, data_start(fs, 2), 0, &blk, NULL), 0);
	assert_int_equal(blk, first_data(fs, 2));
}

static void alloc_block_fills_a_group_then_moves_to_the_next(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	struct sufs_group_layout l1;
	uint32_t n = fs->groups[1].free_blocks, i;
	uint64_t blk = 0;

	sufs_group_layout(&fs->sb, 1, &l1);
	assert_int_equal(n, l1.end - l1.first_data);
	n = (uint32_t)(l1.end - data_start(fs, 1));
	for (i = 0; i < n; i++) {
		assert_int_equal(alloc_block(fs, l1.first_data, 0, &blk, NULL), 0);
		assert_int_equal(blk, data_start(fs, 1) + i);
	}
	assert_int_equal(fs->groups[1].free_blocks, fs->sb.blocks_per_group / 32);
	assert_int_equal(alloc_block(fs, l1.first_data, 0, &blk, NULL), 0);
	assert_int_equal(blk, data_start(fs, 2));
}

static void alloc_block_returns_enospc_when_full_and_never_hands_out_metadata(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint64_t total = fs->sb.free_blocks, n = 0, blk, goal = 0;
	uint8_t *seen = calloc(fs->sb.blocks_count, 1);
	uint32_t g;
	int rc;

	assert_non_null(seen);
	for (;;) {
		rc = alloc_block(fs, goal, 0, &blk, NULL);
		if (rc)
			break;
		assert_true(blk < fs->sb.blocks_count);
		assert_true(blk >= first_data(fs, group_of_block(fs, blk)));
		assert_true(block_in_range(fs, blk));
		assert_int_equal(seen[blk], 0);
		seen[blk] = 1;
		n++;
		goal = (goal + 397) % fs->sb.blocks_count; /* wander */
	}
	assert_int_equal(rc, -ENOSPC);
	assert_int_equal(n, total);
	assert_int_equal(fs->sb.free_blocks, 0);
	for (g = 0; g < fs->sb.groups_count; g++)
		assert_int_equal(fs->groups[g].free_blocks, 0);
	tu_assert_summaries(fs);
	assert_int_equal(alloc_block(fs, 0, 0, &blk, NULL), -ENOSPC);
	assert_int_equal(alloc_block(fs, UINT64_MAX, 0, &blk, NULL), -ENOSPC);
	free(seen);
}

static void a_block_freed_in_a_full_file_system_is_the_next_one_allocated(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint64_t blk, freed = first_data(fs, 3) + 7;

	while (alloc_block(fs, 0, 0, &blk, NULL) == 0)
		;
	assert_int_equal(bitmap_set(fs, SUFS_BITMAP_BLOCK, freed, 0, NULL), 1);
	assert_int_equal(fs->sb.free_blocks, 1);
	assert_int_equal(fs->groups[3].free_blocks, 1);
	assert_int_equal(alloc_block(fs, 0, 0, &blk, NULL), 0);
	assert_int_equal(blk, freed);
	assert_int_equal(alloc_block(fs, 0, 0, &blk, NULL), -ENOSPC);
}

/* ---- inodes -------------------------------------------------------------------- */

static void alloc_inode_spreads_new_directories_over_the_groups(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t ino, g, i, count[4] = { 0 };

	for (i = 0; i < 3; i++) {
		assert_int_equal(alloc_inode(fs, SUFS_ROOT_INO, 1, &ino, NULL), 0);
		count[group_of_inode(fs, ino)]++;
	}
	/* group 0 already has the root; the three others get one each */
	assert_int_equal(count[0], 0);
	for (g = 1; g < 4; g++) {
		assert_int_equal(count[g], 1);
		assert_int_equal(fs->groups[g].used_dirs, 1);
	}
	assert_int_equal(fs->groups[0].used_dirs, 1);
}

static void alloc_inode_keeps_files_in_their_parents_group(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t ino, parent = 2 * 64 + 5, i;

	assert_int_equal(alloc_inode(fs, SUFS_ROOT_INO, 0, &ino, NULL), 0);
	assert_int_equal(ino, SUFS_FIRST_INO);
	for (i = 0; i < 5; i++) {
		assert_int_equal(alloc_inode(fs, parent, 0, &ino, NULL), 0);
		assert_int_equal(group_of_inode(fs, ino), 2);
		assert_int_equal(ino, 2 * 64 + 1 + i);
	}
	assert_int_equal(fs->groups[2].used_dirs, 0);
	assert_int_equal(fs->groups[2].free_inodes, 64 - 5);
}

static void a_file_goes_to_the_next_group_when_its_parents_group_is_full(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t ino, parent = 2 * 64 + 5, i;

	for (i = 0; i < 64; i++) {
		assert_int_equal(alloc_inode(fs, parent, 0, &ino, NULL), 0);
		assert_int_equal(group_of_inode(fs, ino), 2);
	}
	assert_int_equal(fs->groups[2].free_inodes, 0);
	assert_int_equal(alloc_inode(fs, parent, 0, &ino, NULL), 0);
	assert_int_equal(ino, 3 * 64 + 1);
}

static void alloc_inode_returns_enospc_when_every_inode_is_used(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t total = fs->sb.free_inodes, n = 0, ino;
	int rc;

	assert_int_equal(total, 4 * 64 - 2);
	while ((rc = alloc_inode(fs, SUFS_ROOT_INO, n % 2, &ino, NULL)) == 0) {
		assert_true(ino >= SUFS_FIRST_INO && ino <= fs->sb.inodes_count);
		n++;
	}
	assert_int_equal(rc, -ENOSPC);
	assert_int_equal(n, total);
	assert_int_equal(fs->sb.free_inodes, 0);
	tu_assert_summaries(fs);
}

/* Damage: every bit of group g's bitmap set on disk (a raw write), its
 * summary left saying what it said. */
static void fill_bitmap_raw(struct sufs_fs *fs, enum sufs_bitmap which, uint32_t g)
{
	struct sufs_group_layout l;
	uint8_t blk[1024];

	sufs_group_layout(&fs->sb, g, &l);
	memset(blk, 0xff, sizeof(blk));
	assert_int_equal(sufs_block_write(fs, which == SUFS_BITMAP_BLOCK ? l.block_bitmap
					  : l.inode_bitmap, blk), 0);
}

/* A bitmap full while its group's summary says there is room (a damaged
 * image): nothing in use is handed out again, the next group serves, and
 * with every bitmap full it is ENOSPC. */
static void a_full_bitmap_whose_summary_says_free_is_passed_over(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint32_t ino, g;
	uint64_t blk;

	fill_bitmap_raw(fs, SUFS_BITMAP_INODE, 2);
	assert_int_equal(fs->groups[2].free_inodes, 64);
	assert_int_equal(alloc_inode(fs, 2 * 64 + 5, 0, &ino, NULL), 0);
	assert_int_equal(ino, 3 * 64 + 1);
	assert_int_equal(fs->groups[2].free_inodes, 64);

	fill_bitmap_raw(fs, SUFS_BITMAP_BLOCK, 1);
	assert_int_equal(alloc_block(fs, first_data(fs, 1) + 10, 0, &blk, NULL), 0);
	assert_int_equal(blk, data_start(fs, 2));

	for (g = 0; g < 4; g++) {
		fill_bitmap_raw(fs, SUFS_BITMAP_INODE, g);
		fill_bitmap_raw(fs, SUFS_BITMAP_BLOCK, g);
	}
	assert_int_equal(alloc_inode(fs, SUFS_ROOT_INO, 1, &ino, NULL), -ENOSPC);
	assert_int_equal(alloc_inode(fs, SUFS_ROOT_INO, 0, &ino, NULL), -ENOSPC);
	assert_int_equal(alloc_block(fs, 0, 0, &blk, NULL), -ENOSPC);
	assert_int_equal(sufs_create(fs, SUFS_ROOT_INO, "f", 1, 0644, NULL, &ino), -ENOSPC);
}

/* ---- bitmaps ------------------------------------------------------------------------ */

static void bitmap_set_returns_1_on_a_change_0_otherwise_and_moves_the_summaries(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	uint64_t blk = first_data(fs, 2) + 3;
	uint32_t ino = 3 * 64 + 9;
	uint32_t fb = fs->groups[2].free_blocks, fi = fs->groups[3].free_inodes;
	uint64_t sfb = fs->sb.free_blocks;
	uint32_t sfi = fs->sb.free_inodes;

	assert_int_equal(bitmap_set(fs, SUFS_BITMAP_BLOCK, blk, 1, NULL), 1);
	assert_int_equal(is_set(fs, SUFS_BITMAP_BLOCK, blk), 1);
	assert_int_equal(fs->groups[2].free_blocks, fb - 1);
	assert_int_equal(fs->sb.free_blocks, sfb - 1);
	assert_int_equal(bitmap_set(fs, SUFS_BITMAP_BLOCK, blk, 1, NULL), 0);
	assert_int_equal(fs->groups[2].free_blocks, fb - 1);
	assert_int_equal(fs->sb.free_blocks, sfb - 1);
	assert_int_equal(bitmap_set(fs, SUFS_BITMAP_BLOCK, blk, 0, NULL), 1);
	assert_int_equal(is_set(fs, SUFS_BITMAP_BLOCK, blk), 0);
	assert_int_equal(fs->groups[2].free_blocks, fb);
	assert_int_equal(fs->sb.free_blocks, sfb);
	assert_int_equal(bitmap_set(fs, SUFS_BITMAP_BLOCK, blk, 0, NULL), 0);
	assert_int_equal(fs->sb.free_blocks, sfb);

	assert_int_equal(bitmap_set(fs, SUFS_BITMAP_INODE, ino, 1, NULL), 1);
	assert_int_equal(is_set(fs, SUFS_BITMAP_INODE, ino), 1);
	assert_int_equal(fs->groups[3].free_inodes, fi - 1);
	assert_int_equal(fs->sb.free_inodes, sfi - 1);
	assert_int_equal(bitmap_set(fs, SUFS_BITMAP_INODE, ino, 1, NULL), 0);
	assert_int_equal(fs->sb.free_inodes, sfi - 1);
	assert_int_equal(bitmap_set(fs, SUFS_BITMAP_INODE, ino, 0, NULL), 1);
	assert_int_equal(fs->groups[3].free_inodes, fi);
	assert_int_equal(fs->sb.free_inodes, sfi);
	tu_assert_summaries(fs);
}

static void bitmap_set_refuses_numbers_out_of_range(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	int set;

	assert_int_equal(bitmap_set(fs, SUFS_BITMAP_BLOCK, fs->sb.blocks_count, 1, NULL), -EINVAL);
	assert_int_equal(bitmap_set(fs, SUFS_BITMAP_INODE, 0, 1, NULL), -EINVAL);
	assert_int_equal(bitmap_set(fs, SUFS_BITMAP_INODE, fs->sb.inodes_count + 1, 1, NULL), -EINVAL);
	assert_int_equal(bitmap_test(fs, SUFS_BITMAP_INODE, 0, &set), -EINVAL);
	assert_int_equal(sufs_bitmap_test(fs, SUFS_BITMAP_BLOCK, UINT64_MAX, &set), -EINVAL);
	assert_int_equal(bitmap_set(fs, SUFS_BITMAP_INODE, fs->sb.inodes_count, 1, NULL), 1);
	tu_assert_summaries(fs);
}

static void metadata_and_reserved_inodes_are_marked_in_use_by_mkfs(void **state)
{
	struct sufs_fs *fs = fs_of(state);
	struct sufs_group_layout l;
	uint64_t b;
	uint32_t g;

	for (g = 0; g < fs->sb.groups_count; g++) {
		sufs_group_layout(&fs->sb, g, &l);
		for (b = l.start; b < l.first_data; b++)
			assert_int_equal(is_set(fs, SUFS_BITMAP_BLOCK, b), 1);
		assert_int_equal(is_set(fs, SUFS_BITMAP_BLOCK, l.first_data + 1), 0);
	}
	assert_int_equal(is_set(fs, SUFS_BITMAP_INODE, 1), 1);
	assert_int_equal(is_set(fs, SUFS_BITMAP_INODE, SUFS_ROOT_INO), 1);
	assert_int_equal(is_set(fs, SUFS_BITMAP_INODE, SUFS_FIRST_INO), 0);
	tu_assert_summaries(fs);
}

static void public_bitmap_set_needs_a_writable_file_system(void **state)
{
	struct tfs *t = *state;
	uint64_t blk = first_data(t->fs, 1) + 1;
	int set;

	assert_int_equal(sufs_bitmap_set(t->fs, SUFS_BITMAP_BLOCK, blk, 1), 0);
	assert_int_equal(sufs_bitmap_set(t->fs, SUFS_BITMAP_BLOCK, blk, 1), 0);
	tu_reopen(t, 0);
	assert_int_equal(sufs_bitmap_test(t->fs, SUFS_BITMAP_BLOCK, blk, &set), 0);
	assert_int_equal(set, 1);
	assert_int_equal(sufs_bitmap_set(t->fs, SUFS_BITMAP_BLOCK, blk, 0), -EROFS);
	assert_int_equal(sufs_bitmap_test(t->fs, SUFS_BITMAP_BLOCK, blk, &set), 0);
	assert_int_equal(set, 1);
}

static void summaries_written_at_close_match_the_bitmaps_after_reopen(void **state)
{
	struct tfs *t = *state;
	struct sufs_group gd;
	uint32_t ino, i;
	uint64_t blk;

	for (i = 0; i < 50; i++)
		assert_int_equal(alloc_block(t->fs, first_data(t->fs, 3), 0, &blk, NULL), 0);
	for (i = 0; i < 10; i++)
		assert_int_equal(alloc_inode(t->fs, SUFS_ROOT_INO, i < 2, &ino, NULL), 0);
	tu_reopen(t, 0);
	tu_assert_summaries(t->fs);
	assert_int_equal(sufs_get_group(t->fs, 3, &gd), 0);
	assert_int_equal(gd.free_blocks, 1024 - (first_data(t->fs, 3) - 3 * 1024) - 50);
	assert_false(sufs_group_csum_bad(t->fs, 3));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_4groups, tu_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(alloc_block_returns_the_goal_when_it_is_free),
		T(alloc_block_with_a_used_goal_takes_the_next_free_block_after_it),
		T(data_goes_past_the_metadata_area_and_metadata_blocks_into_it),
		T(a_full_metadata_area_spills_and_data_takes_the_areas_last),
		T(alloc_block_fills_a_group_then_moves_to_the_next),
		T(alloc_block_returns_enospc_when_full_and_never_hands_out_metadata),
		T(a_block_freed_in_a_full_file_system_is_the_next_one_allocated),
		T(alloc_inode_spreads_new_directories_over_the_groups),
		T(alloc_inode_keeps_files_in_their_parents_group),
		T(a_file_goes_to_the_next_group_when_its_parents_group_is_full),
		T(alloc_inode_returns_enospc_when_every_inode_is_used),
		T(a_full_bitmap_whose_summary_says_free_is_passed_over),
		T(bitmap_set_returns_1_on_a_change_0_otherwise_and_moves_the_summaries),
		T(bitmap_set_refuses_numbers_out_of_range),
		T(metadata_and_reserved_inodes_are_marked_in_use_by_mkfs),
		T(public_bitmap_set_needs_a_writable_file_system),
		T(summaries_written_at_close_match_the_bitmaps_after_reopen),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
