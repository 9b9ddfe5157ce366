/*
 * mount.c - opening and closing a file system: the top of the library,
 * where every layer is set up and torn down (snapshots included, which sit
 * above the operations).
 *
 * Opened for writing, the file system is marked not clean, its mount count
 * and time are updated, and that superblock is written and barriered before
 * anything else; snapshots are loaded, so that the first change of a block
 * one needs is copied.  Closing writes everything back, then the
 * superblock, clean only if it was opened clean.
 */
#include "config.h"
#include "sufs_int.h"

#include <errno.h>
#include <stdlib.h>

void fs_free_struct(struct sufs_fs *fs)
{
	snap_unload(fs);
	fs_free_base(fs);
}

int sufs_open_dev(struct sufs_dev *dev, unsigned flags, uint64_t sb_offset,
		  struct sufs_fs **out)
{
	uint8_t raw[SUFS_SB_SIZE];
	struct sufs_super sb;
	struct sufs_fs *fs;
	int err;

	if ((flags & SUFS_OPEN_RDWR) && !dev->writable)
		return -EROFS;
	if (!sb_offset)
		sb_offset = SUFS_SB_OFFSET;
	if (!dev->is_blockdev && dev->size < sb_offset + SUFS_SB_SIZE)
		return -SUFS_ESHORT;
	err = sufs_dev_read(dev, sb_offset, raw, sizeof(raw));
	if (err)
		return err;
	sufs_super_decode(raw, &sb);
	if (sb.magic != SUFS_MAGIC)
		return -SUFS_EMAGIC;
	if (sb.checksum != sufs_super_csum(raw) && !(flags & SUFS_OPEN_IGNORE_CSUM))
		return -SUFS_ECHECKSUM;
	err = sufs_super_check(&sb, dev->is_blockdev && !dev->size ? 0 : dev->size, NULL);
	if (err)
		return err;
	/* a feature this library does not know, which older code may read but
	 * not write (its bytes would not survive a write): read-only */
	if ((flags & SUFS_OPEN_RDWR) && (sb.features_ro_compat & ~SUFS_FEATURE_RO_COMPAT_KNOWN))
		return -SUFS_EROFEATURE;
	err = fs_alloc_struct(dev, &sb, flags, &fs);
	if (err)
		return err;
	fs->sb_offset = sb_offset;
	fs->was_clean = (sb.state & SUFS_STATE_CLEAN) != 0;
	err = fs_read_gdt(fs);
	if (err) {
		fs_free_struct(fs);
		return err;
	}
	if ((flags & SUFS_OPEN_RDWR) && !(flags & SUFS_OPEN_NOFLAGS)) {
		/* in use: unclean until closed */
		fs->sb.state &= ~SUFS_STATE_CLEAN;
		fs->sb.mount_count++;
		/* generation numbers differ from one session to the next */
		fs->next_generation = fs->sb.mount_count << 20 | 1;
		fs_now(fs, &fs->sb.mount_time, &(uint32_t){ 0 });
		err = fs_write_super(fs, 0);
		if (!err)
			err = sufs_dev_barrier(dev);
		if (err) {
			fs->dev = NULL;
			fs_free_struct(fs);
			return err;
		}
	}
	/* from the first change on, snapshots get their copies */
	if (flags & SUFS_OPEN_RDWR) {
		err = snap_load(fs);
		if (err) {
			fs->dev = NULL;
			fs_free_struct(fs);
			return err;
		}
	}
	*out = fs;
	return 0;
}

int sufs_open(const char *path, unsigned flags, struct sufs_fs **out)
{
	struct sufs_dev *dev;
	int err = sufs_dev_open(path, (flags & SUFS_OPEN_RDWR) ? SUFS_DEV_RDWR : 0, &dev);

	if (err)
		return err;
	err = sufs_open_dev(dev, flags, 0, out);
	if (err)
		sufs_dev_close(dev);
	return err;
}

/*
 * Close: write back everything, then the superblock marked clean.  A file
 * system fresh from sufs_mkfs() gets its superblocks (primary and backups)
 * only now, after a barrier, so that an interrupted mkfs leaves nothing
 * that claims to be valid.
 */
int sufs_close(struct sufs_fs *fs)
{
	int err = 0;

	if (fs->flags & SUFS_OPEN_RDWR) {
		/* clean only if it was (or a background check left no leak): the
		 * leaks a crash left stay until a check, however much is written
		 * meanwhile (the checker, opening with NOFLAGS, decides itself) */
		if ((!(fs->flags & SUFS_OPEN_NOFLAGS) && fs->was_clean) || fs->mkfs)
			fs->sb.state |= SUFS_STATE_CLEAN;
		/* a new file system went out whole before its superblock: it is
		 * ready for the default mode */
		fs->sb.write_mode = fs->mkfs ? SUFS_MODE_SOFTDEP : fs->mode;
		if (deps_order_was_lost(fs))
			fs->sb.flags |= SUFS_FLAG_NEEDS_FSCK;
		err = ops_release_all(fs);
		if (!err)
			err = fs_write_all(fs);
		if (!err)
			err = sufs_dev_barrier(fs->dev);
		if (!err)
			err = fs_write_super(fs, fs->mkfs);
		if (!err)
			err = sufs_dev_barrier(fs->dev);
		if (!err && deps_order_was_lost(fs))
			err = -ENOMEM; /* all written, but not always in order */
	}
	sufs_dev_close(fs->dev);
	fs_free_struct(fs);
	return err;
}

/* A crash: whatever is only in memory is lost. */
void sufs_abandon(struct sufs_fs *fs)
{
	sufs_dev_close(fs->dev);
	fs_free_struct(fs);
}

