/*
 * alloc.c - block and inode bitmaps and the group summaries.
 *
 * A bitmap bit is the truth about a block or inode; the free counts in the
 * group descriptors and superblock are summaries, kept in memory, written
 * unordered, and repaired by fsck.  Bits past the end of the last group and
 * bits of metadata blocks are set at mkfs time, so a scan never finds them.
 */
#include "config.h"
#include "sufs_int.h"

#include <errno.h>
#include <stdlib.h>

int block_in_range(struct sufs_fs *fs, uint64_t blk)
{
	struct sufs_group_layout l;

	if (blk == 0 || blk >= fs->sb.blocks_count)
		return 0;
	sufs_group_layout(&fs->sb, (uint32_t)(blk / fs->sb.blocks_per_group), &l);
	return blk >= l.first_data;
}

/* Which bitmap block and bit hold resource n. */
static int locate(struct sufs_fs *fs, enum sufs_bitmap which, uint64_t n, uint32_t *group,
		  uint32_t *bit, uint64_t *bmblk)
{
	struct sufs_group_layout l;

	if (which == SUFS_BITMAP_BLOCK) {
		if (n >= fs->sb.blocks_count)
			return -EINVAL;
		*group = (uint32_t)(n / fs->sb.blocks_per_group);
		*bit = (uint32_t)(n % fs->sb.blocks_per_group);
	} else {
		if (n == 0 || n > fs->sb.inodes_count)
			return -EINVAL;
		*group = (uint32_t)((n - 1) / fs->sb.inodes_per_group);
		*bit = (uint32_t)((n - 1) % fs->sb.inodes_per_group);
	}
	sufs_group_layout(&fs->sb, *group, &l);
	*bmblk = which == SUFS_BITMAP_BLOCK ? l.block_bitmap : l.inode_bitmap;
	return 0;
}

int bitmap_test(struct sufs_fs *fs, enum sufs_bitmap which, uint64_t n, int *set)
{
	uint32_t g, bit;
	uint64_t bmblk;
	struct buf *b;
	int err = locate(fs, which, n, &g, &bit, &bmblk);

	if (err)
		return err;
	err = buf_get(fs, bmblk, BUF_BITMAP, &b);
	if (err)
		return err;
	*set = (b->data[bit >> 3] >> (bit & 7)) & 1;
	buf_put(fs, b);
	return 0;
}

/* Change one bit.  Returns 1 when it changed, 0 when it already had that
 * value, or a negative error; *id (if not NULL) is the update that carries
 * the change.  Summaries follow the bit, outside the ordering. */
int bitmap_set(struct sufs_fs *fs, enum sufs_bitmap which, uint64_t n, int set, upd_id *id)
{
	uint32_t g, bit;
	uint64_t bmblk;
	struct buf *b;
	uint8_t mask;
	int err = locate(fs, which, n, &g, &bit, &bmblk);

	if (err)
		return err;
	err = buf_get(fs, bmblk, BUF_BITMAP, &b);
	if (err)
		return err;
	mask = (uint8_t)(1u << (bit & 7));
	if (!!(b->data[bit >> 3] & mask) == !!set) {
		buf_put(fs, b);
		return 0;
	}
	if (id)
		*id = buf_update(fs, b, bit >> 3, 1, UPD_BMSAFEMAP, NULL);
	else
		buf_update(fs, b, bit >> 3, 1, UPD_BMSAFEMAP, NULL);
	if (set)
		b->data[bit >> 3] |= mask;
	else
		b->data[bit >> 3] &= (uint8_t)~mask;
	buf_put(fs, b);
	if (which == SUFS_BITMAP_BLOCK) {
		fs->groups[g].free_blocks += set ? -1u : 1u;
		fs->sb.free_blocks += set ? (uint64_t)-1 : 1;
	} else {
		fs->groups[g].free_inodes += set ? -1u : 1u;
		fs->sb.free_inodes += set ? -1u : 1u;
	}
	fs->gdt_dirty[g * SUFS_GROUP_DESC_SIZE / fs->bsize] = 1;
	fs->sb_dirty = 1;
	return 1;
}

/* First clear bit in [start, nbits), or -1. */
static int64_t find_zero(const uint8_t *map, uint32_t nbits, uint32_t start)
{
	uint32_t i = start;

	while (i < nbits && (i & 63)) {
		if (!(map[i >> 3] & (1u << (i & 7))))
			return i;
		i++;
	}
	for (; i + 64 <= nbits; i += 64) {
		uint64_t w = get64(map + (i >> 3));
		if (w != UINT64_MAX)
			return i + __builtin_ctzll(~w);
	}
	for (; i < nbits; i++)
		if (!(map[i >> 3] & (1u << (i & 7))))
			return i;
	return -1;
}

/* Find and set a clear bit in a group's bitmap, from bit start on. */
static int grab(struct sufs_fs *fs, enum sufs_bitmap which, uint32_t g, uint32_t start,
		uint64_t *n, upd_id *id)
{
	struct sufs_group_layout l;
	struct buf *b;
	uint32_t nbits;
	int64_t bit;
	int err;

	sufs_group_layout(&fs->sb, g, &l);
	if (which == SUFS_BITMAP_BLOCK)
		nbits = (uint32_t)(l.end - l.start);
	else
		nbits = fs->sb.inodes_per_group;
	err = buf_get(fs, which == SUFS_BITMAP_BLOCK ? l.block_bitmap : l.inode_bitmap,
		      BUF_BITMAP, &b);
	if (err)
		return err;
	bit = find_zero(b->data, nbits, start);
	/* a block a snapshot needs is never free (it claims what is freed):
	 * on a damaged image it may look free; leave it alone */
	while (bit >= 0 && which == SUFS_BITMAP_BLOCK && fs->block_held &&
	       fs->block_held(fs, l.start + (uint64_t)bit))
		bit = find_zero(b->data, nbits, (uint32_t)bit + 1);
	buf_put(fs, b);
	if (bit < 0)
		return -ENOSPC;
	if (which == SUFS_BITMAP_BLOCK)
		*n = l.start + (uint64_t)bit;
	else
		*n = (uint64_t)g * fs->sb.inodes_per_group + (uint64_t)bit + 1;
	err = bitmap_set(fs, which, *n, 1, id);
	return err < 0 ? err : 0;
}

/*
 * The metadata area of a group: its first data blocks, 1/32 of the group's
 * blocks (at most half its data blocks), where indirect, directory and attribute
 * blocks go first, as FreeBSD's FFS keeps a part of each cylinder group
 * for metadata; data goes there only once every group's other blocks are
 * in use.  Under soft updates such a block goes out with its pointers to
 * new data undone in the write-back that writes that data, and again once
 * the data is on disk: kept together, the second writes of one write-back
 * are neighbours and go in a few requests, not one each between clean
 * data.  Returns the area's end, as an offset in the group.
 */
static uint32_t meta_end(const struct sufs_fs *fs, uint32_t g)
{
	struct sufs_group_layout l;
	uint64_t data, n;

	sufs_group_layout(&fs->sb, g, &l);
	n = (l.end - l.start) / 32;
	data = l.end > l.first_data ? l.end - l.first_data : 0;
	if (n > data / 2)
		n = data / 2;
	return (uint32_t)(l.first_data - l.start + n);
}

uint64_t meta_goal(const struct sufs_fs *fs, uint64_t goal)
{
	struct sufs_group_layout l;

	if (goal >= fs->sb.blocks_count)
		goal = 0;
	sufs_group_layout(&fs->sb, (uint32_t)(goal / fs->sb.blocks_per_group), &l);
	return l.first_data;
}

/* The goal's group from the goal on, every other group, then the goal's
 * group from its start; data past the metadata areas first (meta 0), then,
 * when that finds none, every group from its start. */
static int find_block(struct sufs_fs *fs, uint64_t goal, int meta, uint64_t *blk, upd_id *id)
{
	uint32_t ngroups = fs->sb.groups_count, g0, g, i, start, skip;
	int err, pass;

	if (goal >= fs->sb.blocks_count)
		goal = 0;
	g0 = (uint32_t)(goal / fs->sb.blocks_per_group);
	for (pass = meta ? 1 : 0; pass < 2; pass++) {
		for (i = 0; i <= ngroups; i++) {
			g = (g0 + i) % ngroups;
			start = i == 0 && (meta || pass == 0) ?
				(uint32_t)(goal % fs->sb.blocks_per_group) : 0;
			if (fs->groups[g].free_blocks == 0)
				continue;
			if (pass == 0 && start < (skip = meta_end(fs, g)))
				start = skip;
			err = grab(fs, SUFS_BITMAP_BLOCK, g, start, blk, id);
			if (!err && fs->alloc_note)
				fs->alloc_note(fs, *blk, fs->alloc_note_arg);
			if (err != -ENOSPC)
				return err;
		}
	}
	return -ENOSPC;
}

/*
 * Pick a group for a new inode.  Files go near their directory.  New
 * directories are spread out: among a window of groups, the one with room
 * (free inodes at least the average) and the fewest directories.
 */
static uint32_t pick_group(struct sufs_fs *fs, uint32_t parent, int is_dir)
{
	uint32_t ngroups = fs->sb.groups_count, g, i, best = UINT32_MAX, window;
	uint32_t avg = (uint32_t)(fs->sb.free_inodes / ngroups);

	if (!is_dir || ngroups == 1)
		return parent ? (parent - 1) / fs->sb.inodes_per_group : 0;
	window = ngroups < 64 ? ngroups : 64;
	for (i = 0; i < window; i++) {
		g = (fs->last_dir_group + 1 + i) % ngroups;
		if (fs->groups[g].free_inodes == 0 || fs->groups[g].free_inodes < avg)
			continue;
		if (best == UINT32_MAX || fs->groups[g].used_dirs < fs->groups[best].used_dirs ||
		    (fs->groups[g].used_dirs == fs->groups[best].used_dirs &&
		     fs->groups[g].free_blocks > fs->groups[best].free_blocks))
			best = g;
	}
	if (best == UINT32_MAX)
		best = (parent - 1) / fs->sb.inodes_per_group;
	fs->last_dir_group = best;
	return best;
}

static int find_inode(struct sufs_fs *fs, uint32_t parent, int is_dir, uint32_t *ino,
		      upd_id *id)
{
	uint32_t ngroups = fs->sb.groups_count, g0, g, i;
	uint64_t n;
	int err;

	g0 = pick_group(fs, parent, is_dir);
	for (i = 0; i < ngroups; i++) {
		g = (g0 + i) % ngroups;
		if (fs->groups[g].free_inodes == 0)
			continue;
		err = grab(fs, SUFS_BITMAP_INODE, g, 0, &n, id);
		if (err == -ENOSPC)
			continue;
		if (err)
			return err;
		if (is_dir) {
			fs->groups[g].used_dirs++;
			fs->gdt_dirty[g * SUFS_GROUP_DESC_SIZE / fs->bsize] = 1;
		}
		*ino = (uint32_t)n;
		return 0;
	}
	return -ENOSPC;
}

/*
 * Space freed is space usable.  A block or an inode freed under soft
 * updates goes back to its bitmap only once every old pointer to it is
 * cleared on disk (rule 2): until then it is deferred work.  An allocation
 * that finds no room while such frees wait writes back what they wait for,
 * lets them run, and looks again (as FreeBSD's softdep_request_cleanup()):
 * ENOSPC only when the space is really in use.
 */
int alloc_block(struct sufs_fs *fs, uint64_t goal, int meta, uint64_t *blk, upd_id *id)
{
	int err = find_block(fs, goal, meta, blk, id), rc;

	while (err == -ENOSPC && (rc = deps_flush_deferred(fs)) != 0)
		err = rc < 0 ? rc : find_block(fs, goal, meta, blk, id);
	return err;
}

/* Are there need free blocks, once the frees that wait have run if need
 * be?  0 or -ENOSPC (an operation that cannot finish allocates nothing). */
int alloc_room(struct sufs_fs *fs, uint64_t need)
{
	int rc;

	while (fs->sb.free_blocks < need)
		if ((rc = deps_flush_deferred(fs)) <= 0)
			return rc < 0 ? rc : -ENOSPC;
	return 0;
}

int alloc_inode(struct sufs_fs *fs, uint32_t parent, int is_dir, uint32_t *ino, upd_id *id)
{
	int err = find_inode(fs, parent, is_dir, ino, id), rc;

	while (err == -ENOSPC && (rc = deps_flush_deferred(fs)) != 0)
		err = rc < 0 ? rc : find_inode(fs, parent, is_dir, ino, id);
	return err;
}

/*
 * Return a block to the free pool, once every pointer to the block is
 * cleared on disk (rule 2): from deferred work (deps_defer() runs it at
 * once when nothing is pending), or for a file whose pointers never
 * reached the disk (deps_forget_new(), through freeing_run()).  The cached
 * buffer, if any, need not be written any more.  A snapshot that still
 * needs the block claims it instead (the claim_freed hook, snap.c).
 */
static int free_later(struct sufs_fs *fs, void *arg)
{
	uint64_t *blk = arg;
	int err = fs ? free_block(fs, *blk) : 0;

	free(blk);
	return err;
}

int free_block(struct sufs_fs *fs, uint64_t blk)
{
	struct buf *b = cache_lookup(fs, blk);
	upd_id hold;
	uint64_t *arg;
	int err;

	if (!block_in_range(fs, blk))
		return -SUFS_ECORRUPT;
	if (b && (hold = deps_pending_kind(b, UPD_COPYONWRITE)) != 0) {
		/* its old contents are on their way to a snapshot: reused before
		 * that copy is on disk, the snapshot would read the new ones */
		if (!(arg = malloc(sizeof(*arg))))
			return -ENOMEM;
		*arg = blk;
		return deps_defer(fs, &hold, 1, free_later, arg);
	}
	if (fs->claim_freed && fs->claim_freed(fs, blk))
		return 0; /* a snapshot took it: unchanged since, it stays allocated */
	if (b)
		deps_cancel(fs, b);
	err = bitmap_set(fs, SUFS_BITMAP_BLOCK, blk, 0, NULL);
	cache_drop(fs, blk);
	return err < 0 ? err : 0;
}

/* Return an inode number to the free pool (deferred, as free_block). */
int free_inode(struct sufs_fs *fs, uint32_t ino, int was_dir)
{
	uint32_t g = (ino - 1) / fs->sb.inodes_per_group;
	int err = bitmap_set(fs, SUFS_BITMAP_INODE, ino, 0, NULL);

	if (err == 1 && was_dir && fs->groups[g].used_dirs) {
		fs->groups[g].used_dirs--;
		fs->gdt_dirty[g * SUFS_GROUP_DESC_SIZE / fs->bsize] = 1;
	}
	return err < 0 ? err : 0;
}
