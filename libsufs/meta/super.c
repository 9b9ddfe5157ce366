/*
 * super.c - the file system in memory: its superblock and group
 * descriptors, the clock, sync and the write mode, and the raw access
 * tools have.
 *
 * The superblock and the group descriptors live in memory, decoded, while
 * the file system is open.  Their free counts are summaries: written as they
 * stand, unordered, at sync and close.  Opening and closing are
 * fs/mount.c's, at the top: they load and drop snapshots, which sit above
 * this layer.
 */
#include "config.h"
#include "sufs_int.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#define CACHE_BYTES (64u << 20)

void fs_now(struct sufs_fs *fs, int64_t *sec, uint32_t *nsec)
{
	struct timespec ts;

	if (fs->fixed_clock) {
		*sec = fs->clock_sec;
		*nsec = fs->clock_nsec;
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	*sec = ts.tv_sec;
	*nsec = (uint32_t)ts.tv_nsec;
}

void sufs_set_clock(struct sufs_fs *fs, int64_t sec, uint32_t nsec)
{
	fs->fixed_clock = 1;
	fs->clock_sec = sec;
	fs->clock_nsec = nsec;
	/* the open, which read the real clock, is dated by this one too:
	 * the close writes the superblock again */
	if ((fs->flags & SUFS_OPEN_RDWR) && !(fs->flags & SUFS_OPEN_NOFLAGS) && !fs->mkfs)
		fs->sb.mount_time = sec;
}

int fs_alloc_struct(struct sufs_dev *dev, const struct sufs_super *sb, unsigned flags,
		    struct sufs_fs **out)
{
	struct sufs_fs *fs = calloc(1, sizeof(*fs));
	int err;

	if (!fs)
		return -ENOMEM;
	fs->dev = dev;
	fs->sb = *sb;
	fs->flags = flags;
	fs->bsize = sb->block_size;
	fs->bshift = (uint32_t)__builtin_ctz(sb->block_size);
	fs->ptrs = sb->block_size / 8;
	fs->inodes_per_block = sb->block_size / SUFS_INODE_SIZE;
	fs->groups = calloc(sb->groups_count, sizeof(*fs->groups));
	fs->group_bad = calloc(sb->groups_count, 1);
	fs->gdt_dirty = calloc(sb->gdt_blocks, 1);
	fs->zero = calloc(1, sb->block_size);
	pthread_mutex_init(&fs->lock, NULL);
	if (!fs->groups || !fs->group_bad || !fs->gdt_dirty || !fs->zero) {
		fs_free_base(fs);
		return -ENOMEM;
	}
	fs->mode = SUFS_MODE_SOFTDEP;
	fs->dirty_percent = 50;
	fs->max_age_ms = 30000;
	fs->last_epoch = now_seconds_mono(); /* changes age from now, not from boot */
	/* the cache keeps the engine's state of each buffer with it; the
	 * engine writes back for the cache when it is full of dirty blocks */
	err = cache_init(fs, CACHE_BYTES, deps_buf_extra());
	if (!err)
		err = deps_init(fs, fs_lost_order);
	if (err) {
		fs_free_base(fs);
		return err;
	}
	fs->cache.write_back = cache_writeback;
	*out = fs;
	return 0;
}

/* Free what fs_alloc_struct() made, and what the layers up to this one
 * hold (the engine's records, the cache, the directory indexes); the
 * layers above free theirs first (fs/mount.c: fs_free_struct()). */
void fs_free_base(struct sufs_fs *fs)
{
	dirhash_drop(fs, 0);
	deps_destroy(fs);
	if (fs->cache.hash)
		cache_destroy(fs);
	free(fs->groups);
	free(fs->group_bad);
	free(fs->gdt_dirty);
	free(fs->zero);
	free(fs->parents);
	free(fs->holds);
	pthread_mutex_destroy(&fs->lock);
	free(fs);
}

void sufs_lock(struct sufs_fs *fs)
{
	pthread_mutex_lock(&fs->lock);
}

void sufs_unlock(struct sufs_fs *fs)
{
	pthread_mutex_unlock(&fs->lock);
}

/*
 * Read the group descriptor table of sb from dev and check each
 * descriptor: its checksum, and the locations and counts its group's
 * layout allows.  Decodes them into groups[] and flags the damaged ones in
 * bad[] when these are not NULL.  Returns how many are damaged, or a
 * negative errno.
 */
int fs_scan_gdt(struct sufs_dev *dev, const struct sufs_super *sb, struct sufs_group *groups,
		uint8_t *bad)
{
	struct sufs_group_layout l0;
	struct sufs_group one;
	uint32_t bs = sb->block_size, per = bs / SUFS_GROUP_DESC_SIZE, i, g;
	uint8_t *blk = malloc(bs);
	int err = 0, nbad = 0, rc;

	if (!blk)
		return -ENOMEM;
	sufs_group_layout(sb, 0, &l0);
	for (i = 0; i < sb->gdt_blocks && !err; i++) {
		err = sufs_dev_read(dev, (l0.gdt_start + i) * bs, blk, bs);
		for (g = i * per; !err && g < sb->groups_count && g < (i + 1) * per; g++) {
			const uint8_t *raw = blk + (g - i * per) * SUFS_GROUP_DESC_SIZE;
			struct sufs_group *gd = groups ? &groups[g] : &one;

			rc = sufs_group_check(sb, g, raw, gd, NULL);
			if (rc) {
				if (bad)
					bad[g] = rc == -SUFS_ECHECKSUM ? GROUP_BAD_CSUM : GROUP_BAD_FIELD;
				nbad++;
			}
		}
	}
	free(blk);
	return err ? err : nbad;
}

int fs_read_gdt(struct sufs_fs *fs)
{
	int n = fs_scan_gdt(fs->dev, &fs->sb, fs->groups, fs->group_bad);
	uint32_t g;

	if (n < 0)
		return n;
	if (n == 0 || (fs->flags & SUFS_OPEN_IGNORE_CSUM))
		return 0;
	/* a field that cannot be is worse news than a checksum alone */
	for (g = 0; g < fs->sb.groups_count; g++)
		if (fs->group_bad[g] == GROUP_BAD_FIELD)
			return -SUFS_ECORRUPT;
	return -SUFS_ECHECKSUM;
}

int fs_write_gdt(struct sufs_fs *fs)
{
	struct sufs_group_layout l0;
	uint32_t per = fs->bsize / SUFS_GROUP_DESC_SIZE, i, g;
	uint8_t *blk;
	int err = 0;

	blk = malloc(fs->bsize);
	if (!blk)
		return -ENOMEM;
	sufs_group_layout(&fs->sb, 0, &l0);
	for (i = 0; i < fs->sb.gdt_blocks && !err; i++) {
		if (!fs->gdt_dirty[i])
			continue;
		memset(blk, 0, fs->bsize);
		for (g = i * per; g < fs->sb.groups_count && g < (i + 1) * per; g++) {
			struct sufs_group_layout l;
			sufs_group_layout(&fs->sb, g, &l);
			fs->groups[g].block_bitmap = l.block_bitmap;
			fs->groups[g].inode_bitmap = l.inode_bitmap;
			fs->groups[g].inode_table = l.inode_table;
			sufs_group_encode(&fs->groups[g], g,
					  blk + (g - i * per) * SUFS_GROUP_DESC_SIZE);
		}
		err = sufs_dev_write(fs->dev, (l0.gdt_start + i) << fs->bshift, blk, fs->bsize);
		if (!err) {
			fs->gdt_dirty[i] = 0;
			fs->stats.block_writes++;
		}
	}
	free(blk);
	return err;
}

/* Write the primary superblock, and with all_copies every backup too. */
int fs_write_super(struct sufs_fs *fs, int all_copies)
{
	uint8_t raw[SUFS_SB_SIZE];
	struct sufs_super sb = fs->sb;
	uint32_t g;
	int err;

	fs_now(fs, &sb.write_time, &(uint32_t){ 0 });
	fs->sb.write_time = sb.write_time;
	sb.sb_group = 0;
	sufs_super_encode(&sb, raw);
	err = sufs_dev_write(fs->dev, SUFS_SB_OFFSET, raw, sizeof(raw));
	for (g = 1; !err && all_copies && g < fs->sb.groups_count; g++) {
		if (!sufs_group_has_backup(g))
			continue;
		sb.sb_group = g;
		sufs_super_encode(&sb, raw);
		err = sufs_dev_write(fs->dev, ((uint64_t)g * sb.blocks_per_group) << fs->bshift,
				     raw, sizeof(raw));
	}
	if (!err)
		fs->sb_dirty = 0;
	return err;
}

/* Everything pending to disk, the summaries after it.  In async mode the
 * blocks go out as they stand and one barrier closes the lot. */
int fs_write_all(struct sufs_fs *fs)
{
	int err = 0;

	if (fs->mode == SUFS_MODE_ASYNC) {
		while (!err && (fs->cache.dirty || deps_deferred_work(fs)))
			err = cache_writeback(fs);
	} else {
		err = deps_drain(fs);
	}
	if (!err)
		err = fs_write_gdt(fs);
	return err;
}

/*
 * Memory ran out and the engine lost an ordering (deps.c: d->failed):
 * before any block is written out of order, the superblock on disk says
 * that the image needs a full check, so that a crash from now on is not
 * taken for one that left only leaks.  (Not for an image sufs_mkfs() is
 * still making: it has no superblock until it is whole.)
 */
int fs_lost_order(struct sufs_fs *fs)
{
	int err;

	if (fs->mkfs || fs->order_lost_noted)
		return 0;
	fs->sb.flags |= SUFS_FLAG_NEEDS_FSCK;
	err = fs_write_super(fs, 0);
	if (!err)
		err = sufs_dev_barrier(fs->dev);
	if (!err)
		fs->order_lost_noted = 1;
	return err;
}

/* Everything written, even when an ordering was lost on the way: that is
 * reported after (-ENOMEM), with the image marked (fs_lost_order()). */
int sufs_sync(struct sufs_fs *fs)
{
	int err;

	if (!(fs->flags & SUFS_OPEN_RDWR))
		return 0;
	err = fs_write_all(fs);
	if (!err)
		err = sufs_dev_barrier(fs->dev);
	if (!err && !fs->mkfs)
		err = fs_write_super(fs, 0);
	return err ? err : deps_order_was_lost(fs) ? -ENOMEM : 0;
}

const struct sufs_super *sufs_get_super(struct sufs_fs *fs)
{
	return &fs->sb;
}

struct sufs_dev *sufs_get_dev(struct sufs_fs *fs)
{
	return fs->dev;
}

int sufs_get_group(struct sufs_fs *fs, uint32_t group, struct sufs_group *out)
{
	if (group >= fs->sb.groups_count)
		return -EINVAL;
	*out = fs->groups[group];
	return 0;
}

int sufs_group_csum_bad(struct sufs_fs *fs, uint32_t group)
{
	return group < fs->sb.groups_count && fs->group_bad[group];
}

void sufs_get_stats(struct sufs_fs *fs, struct sufs_stats *st)
{
	*st = fs->stats;
	st->cache_blocks = fs->cache.count;
	st->cache_bytes = (uint64_t)fs->cache.count * fs->bsize;
	st->dirty_blocks = fs->cache.dirty;
	st->barriers = fs->dev->barriers;
	deps_get_stats(fs, st);
}

int sufs_set_mode(struct sufs_fs *fs, unsigned mode)
{
	int err;

	if (mode > SUFS_MODE_ASYNC)
		return -EINVAL;
	if (mode == fs->mode)
		return 0;
	/* what was recorded under the old policy goes out under it */
	err = sufs_sync(fs);
	if (err)
		return err;
	fs->mode = mode;
	fs->sb.write_mode = mode;
	/* on disk before anything is written under it: a background check
	 * must know an image that a crash in async mode left */
	if ((fs->flags & SUFS_OPEN_RDWR) && !fs->mkfs) {
		err = fs_write_super(fs, 0);
		if (!err)
			err = sufs_dev_barrier(fs->dev);
	}
	return err;
}

int sufs_test_break_rule(struct sufs_fs *fs, unsigned rule)
{
	if (rule > 4)
		return -EINVAL;
	fs->broken_rule = rule;
	return 0;
}

/* ---- the snapshot slots -------------------------------------------------------- */

/*
 * The superblock's slots name the snapshot files (snap/ keeps the
 * snapshots themselves): what the operations below snapshots need to know
 * of them, to refuse changing a snapshot's file or renaming /.snap.
 */
const char snapdir_name[] = ".snap";

/* The slot naming inode ino, or -1. */
int sb_snap_slot(const struct sufs_fs *fs, uint32_t ino)
{
	unsigned i;

	for (i = 0; i < SUFS_SNAP_SLOTS; i++)
		if (ino && fs->sb.snap[i].ino == ino)
			return (int)i;
	return -1;
}

int snap_is_file(const struct sufs_fs *fs, uint32_t ino)
{
	return sb_snap_slot(fs, ino) >= 0;
}

int snap_dir_pinned(const struct sufs_fs *fs, uint32_t dir, const char *name, size_t len)
{
	unsigned i;

	if (dir != SUFS_ROOT_INO || len != sizeof(snapdir_name) - 1 ||
	    memcmp(name, snapdir_name, len) != 0)
		return 0;
	for (i = 0; i < SUFS_SNAP_SLOTS; i++)
		if (fs->sb.snap[i].ino)
			return 1;
	return 0;
}

int sufs_bitmap_test(struct sufs_fs *fs, enum sufs_bitmap which, uint64_t n, int *set)
{
	return bitmap_test(fs, which, n, set);
}

int sufs_bitmap_set(struct sufs_fs *fs, enum sufs_bitmap which, uint64_t n, int set)
{
	int err;

	if (!(fs->flags & SUFS_OPEN_RDWR))
		return -EROFS;
	err = bitmap_set(fs, which, n, set, NULL);
	return err < 0 ? err : 0;
}

int sufs_block_read(struct sufs_fs *fs, uint64_t blk, void *buf)
{
	struct buf *b;
	int err = buf_get(fs, blk, BUF_RAW, &b);

	if (err)
		return err == -SUFS_ECORRUPT ? -EINVAL : err;
	memcpy(buf, b->data, fs->bsize);
	buf_put(fs, b);
	return 0;
}

/* A raw write: the block goes out exactly as given, no checksum sealed. */
int sufs_block_write(struct sufs_fs *fs, uint64_t blk, const void *buf)
{
	struct buf *b;
	int err;

	if (!(fs->flags & SUFS_OPEN_RDWR))
		return -EROFS;
	err = buf_get(fs, blk, BUF_RAW, &b);
	if (err)
		return err == -SUFS_ECORRUPT ? -EINVAL : err;
	b->type = BUF_RAW;
	dirhash_drop(fs, 0); /* a raw write may change any directory */
	buf_update(fs, b, 0, fs->bsize, UPD_DATA, NULL);
	memcpy(b->data, buf, fs->bsize);
	buf_put(fs, b);
	return fs_op_end(fs, 0);
}
