/*
 * view.c - a snapshot's view: a read-only device that reads as the file
 * system was when the snapshot was taken (a block the snapshot holds comes
 * from its file, any other from the live file system), for fsck.sufs -b
 * and sufs-snap export.  Each read takes sufs_lock(), so that a second
 * thread may read a view while the first changes the file system.
 */
#include "config.h"
#include "snap_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct view {
	struct sufs_fs *fs;
	unsigned slot;
	uint32_t ino;
	struct snap *own;       /* NEED bits when the fs does not keep them */
	uint8_t *scratch;
	uint32_t kib;           /* throttle: KiB per second, 0 for none */
	double t0;
	uint64_t bytes;
	int (*cancelled)(void *arg); /* polled while throttled: no sleep once true */
	void *arg;
};

void snap_view_throttle(struct sufs_dev *view, uint32_t kib, int (*cancelled)(void *arg),
			void *arg)
{
	struct view *v = view->priv;

	v->kib = kib;
	v->t0 = now_seconds_mono();
	v->bytes = 0;
	v->cancelled = cancelled;
	v->arg = arg;
}

/* Sleep until the bytes read so far fit the rate: in slices of at most a
 * tenth of a second, and no more once the check is cancelled, so that an
 * interrupted check runs at full speed to its next poll (the checker polls
 * every 64th step: minutes at a low rate). */
static void throttle(struct view *v, uint64_t n)
{
	double ahead;

	v->bytes += n;
	while ((ahead = (double)v->bytes / (v->kib * 1024.0) - (now_seconds_mono() - v->t0)) > 0) {
		struct timespec ts = { 0, 100000000 };

		if (v->cancelled && v->cancelled(v->arg))
			return;
		if (ahead < 0.1)
			ts.tv_nsec = (long)(ahead * 1e9);
		nanosleep(&ts, NULL);
	}
}

static struct snap *view_snap(struct view *v)
{
	struct snap *s;

	if (v->fs->sb.snap[v->slot].ino != v->ino)
		return NULL; /* deleted since */
	s = snap_active(v->fs, v->slot);
	return s ? s : v->own;
}

/* Where block blk of the view is: *p, its copy in the snapshot (0: none,
 * the live block is unchanged since); *used, whether it was in use then. */
static int view_map(struct view *v, uint64_t blk, uint64_t *p, int *used)
{
	struct sufs_fs *fs = v->fs;
	struct sufs_inode in;
	struct snap *s = view_snap(v);
	int err;

	if (!s)
		return -SUFS_ENOTSNAP;
	err = inode_load(fs, v->ino, &in);
	if (!err)
		err = bmap_get(fs, &in, blk, p);
	if (err)
		return err;
	if (*p && !block_in_range(fs, *p))
		return -SUFS_ECORRUPT;
	*used = *p || need_test(s, blk);
	return 0;
}

/* Block blk of the view into out; *used says whether it was in use then. */
static int view_block(struct view *v, uint64_t blk, uint8_t *out, int *used)
{
	uint64_t p;
	int err = view_map(v, blk, &p, used);

	if (err || !out)
		return err;
	if (!*used) {
		memset(out, 0, v->fs->bsize);
		return 0;
	}
	/* a block not copied is unchanged since: the cache's bytes are the disk's */
	return snap_read_live(v->fs, p ? p : blk, out);
}

/*
 * Whole blocks first..first+n-1 (all within the file system) into dst:
 * the blocks that are read from the live device in place, neither copied
 * nor in the cache, in one request per run of them (the checker reads the
 * inode tables 8 blocks at a time).
 */
static int view_blocks(struct view *v, uint64_t first, uint64_t n, uint8_t *dst)
{
	struct sufs_fs *fs = v->fs;
	uint64_t i, p, run = 0;
	int err = 0, used, in_place;

	for (i = 0; i <= n && !err; i++) {
		uint64_t blk = first + i;

		in_place = 0;
		if (i < n) {
			err = view_map(v, blk, &p, &used);
			in_place = !err && used && !p && !cache_lookup(fs, blk);
		}
		if (in_place)
			continue; /* read with the run it ends */
		if (!err && run < i) /* the blocks read in place before i */
			err = sufs_dev_read(fs->dev, (first + run) << fs->bshift,
					    dst + (run << fs->bshift), (i - run) << fs->bshift);
		run = i + 1;
		if (err || i == n)
			break;
		if (!used)
			memset(dst + (i << fs->bshift), 0, fs->bsize);
		else
			err = snap_read_live(fs, p ? p : blk, dst + (i << fs->bshift));
	}
	return err;
}

static int view_read(struct sufs_dev *d, uint64_t off, void *buf, size_t len)
{
	struct view *v = d->priv;
	struct sufs_fs *fs = v->fs;
	uint8_t *dst = buf;
	int err = 0, used;

	while (len && !err) {
		uint64_t blk = off >> fs->bshift;
		uint32_t boff = (uint32_t)(off & (fs->bsize - 1));
		size_t n = fs->bsize - boff < len ? fs->bsize - boff : len;

		if (blk >= fs->sb.blocks_count) {
			memset(dst, 0, n);
		} else if (!boff && len >= 2 * (size_t)fs->bsize) {
			/* whole blocks, as many as are in range */
			uint64_t nb = (len >> fs->bshift);
			if (nb > fs->sb.blocks_count - blk)
				nb = fs->sb.blocks_count - blk;
			n = (size_t)nb << fs->bshift;
			sufs_lock(fs);
			err = view_blocks(v, blk, nb, dst);
			sufs_unlock(fs);
		} else {
			sufs_lock(fs);
			err = view_block(v, blk, v->scratch, &used);
			sufs_unlock(fs);
			if (!err)
				memcpy(dst, v->scratch + boff, n);
		}
		dst += n;
		off += n;
		len -= n;
	}
	if (!err && v->kib)
		throttle(v, (uint64_t)(dst - (uint8_t *)buf));
	return err;
}

/* The live blocks under the range: those the view reads in place. */
static void view_prefetch(struct sufs_dev *d, uint64_t off, uint64_t len)
{
	struct view *v = d->priv;

	sufs_lock(v->fs);
	sufs_dev_prefetch(v->fs->dev, off, len);
	sufs_unlock(v->fs);
}

static int view_write(struct sufs_dev *d, uint64_t off, const void *buf, size_t len)
{
	(void)d; (void)off; (void)buf; (void)len;
	return -EROFS;
}

static int view_barrier(struct sufs_dev *d)
{
	(void)d;
	return 0;
}

static void view_close(struct sufs_dev *d)
{
	struct view *v = d->priv;

	snap_free(v->own);
	free(v->scratch);
	free(v);
}

static const struct sufs_dev_ops view_ops = {
	view_read, view_write, view_barrier, NULL, view_close, view_prefetch,
};

/* The view of the snapshot in slot, as a device called "snapshot NAME". */
int snap_view_open(struct sufs_fs *fs, unsigned slot, const char *name,
		   struct sufs_dev **out)
{
	struct sufs_dev *d;
	struct view *v;
	int err;

	if (fs->sb.snap[slot].flags & SUFS_SNAP_BROKEN)
		return -SUFS_ECORRUPT;
	d = calloc(1, sizeof(*d));
	v = calloc(1, sizeof(*v));
	if (!d || !v || !(v->scratch = malloc(fs->bsize)) ||
	    (d->name = malloc(strlen(name) + 16)) == NULL) {
		free(v ? v->scratch : NULL);
		free(v);
		free(d);
		return -ENOMEM;
	}
	sprintf(d->name, "snapshot %s", name);
	v->fs = fs;
	v->slot = slot;
	v->ino = fs->sb.snap[slot].ino;
	if (!snap_active(fs, slot)) {
		err = snap_build(fs, slot, &v->own);
		if (err) {
			free(v->scratch);
			free(v);
			free(d->name);
			free(d);
			return err;
		}
	}
	d->ops = &view_ops;
	d->size = fs->sb.blocks_count << fs->bshift;
	d->priv = v;
	*out = d;
	return 0;
}

int sufs_snap_open_dev(struct sufs_fs *fs, const char *name, struct sufs_dev **out)
{
	struct sufs_snap_info info;
	int err = sufs_snap_find(fs, name, &info);

	return err ? err : snap_view_open(fs, info.slot, name, out);
}

int sufs_snap_block_used(struct sufs_dev *view, uint64_t blk, int *used)
{
	struct view *v;
	int err;

	if (view->ops != &view_ops)
		return -EINVAL;
	v = view->priv;
	if (blk >= v->fs->sb.blocks_count)
		return -EINVAL;
	sufs_lock(v->fs);
	err = view_block(v, blk, NULL, used);
	sufs_unlock(v->fs);
	return err;
}
