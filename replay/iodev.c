/*
 * iodev.c - the counting, logging and crashing device of sufs-replay.
 *
 * It forwards every call to the image's own device (the inner one) and
 * keeps three promises:
 *   1. counts: a write of n blocks counts n block writes, whatever its
 *      alignment (a 1 KiB superblock write in a 4 KiB block counts one);
 *   2. the log holds exactly what reached the image, in order: each write
 *      as the whole blocks it touched (read back from the image when the
 *      write covered only part of one), each barrier after it succeeded;
 *   3. the crash point: once the limit is reached, nothing more reaches the
 *      image.  A write that would go past a block limit writes the blocks up
 *      to it and fails; the first write after a barrier limit fails.  From
 *      then on every write and barrier fails.  (A barrier alone changes no
 *      byte of the image, so until the crash barriers pass.)
 */
#include "config.h"

#include "iodev.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum limit { LIMIT_NONE, LIMIT_BLOCKS, LIMIT_BARRIERS };

struct iodev {
	struct sufs_dev *dev;      /* ours, given to the library; NULL once closed */
	struct sufs_dev *inner;    /* the image */
	uint32_t bsize;
	enum limit limit_kind;
	uint64_t limit;
	struct iodev_counts c;
	FILE *log;
	uint8_t *readback;         /* whole blocks for the log of a partial write */
	size_t readback_size;
};

/* ---- the log --------------------------------------------------------------- */

static void put_le(uint8_t *p, uint64_t v, unsigned bytes)
{
	unsigned i;
	for (i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int log_bytes(struct iodev *io, const void *p, size_t len)
{
	if (io->c.log_error)
		return -EIO;
	if (fwrite(p, 1, len, io->log) != len) {
		io->c.log_error = errno ? errno : EIO;
		return -EIO;
	}
	return 0;
}

/* A 'W' record for the blocks first .. first + count - 1, which the write
 * of len bytes at byte off (from buf) has just put on the image. */
static int log_write(struct iodev *io, uint64_t first, uint64_t count, uint64_t off,
		     const void *buf, size_t len)
{
	uint8_t head[13];
	size_t bytes = (size_t)count * io->bsize;
	int err;

	if (off != first * io->bsize || len != bytes) {
		/* a part of a block: log the blocks as they now stand */
		if (io->readback_size < bytes) {
			uint8_t *p = realloc(io->readback, bytes);
			if (!p)
				return -ENOMEM;
			io->readback = p;
			io->readback_size = bytes;
		}
		err = sufs_dev_read(io->inner, first * io->bsize, io->readback, bytes);
		if (err)
			return err;
		buf = io->readback;
	}
	head[0] = IOLOG_WRITE;
	put_le(head + 1, first, 8);
	put_le(head + 9, count, 4);
	err = log_bytes(io, head, sizeof(head));
	return err ? err : log_bytes(io, buf, bytes);
}

int iodev_log_open(struct iodev *io, const char *path)
{
	uint8_t head[IOLOG_HEADER_SIZE];

	io->log = fopen(path, "wbe");
	if (!io->log)
		return -errno;
	memcpy(head, IOLOG_MAGIC, 8);
	put_le(head + 8, IOLOG_VERSION, 4);
	put_le(head + 12, io->bsize, 4);
	put_le(head + 16, io->inner->size, 8);
	if (log_bytes(io, head, sizeof(head)) || fflush(io->log)) {
		int err = io->c.log_error ? io->c.log_error : errno;
		fclose(io->log);
		io->log = NULL;
		io->c.log_error = 0;
		return -err;
	}
	return 0;
}

/* ---- the device ------------------------------------------------------------------ */

/* Has the crash point been reached, so that nothing more may be written? */
static int at_limit(const struct iodev *io)
{
	switch (io->limit_kind) {
	case LIMIT_BLOCKS:
		return io->c.blocks >= io->limit;
	case LIMIT_BARRIERS:
		return io->c.barriers >= io->limit;
	default:
		return 0;
	}
}

static int wrap_read(struct sufs_dev *dev, uint64_t off, void *buf, size_t len)
{
	struct iodev *io = dev->priv;
	return sufs_dev_read(io->inner, off, buf, len);
}

static int wrap_write(struct sufs_dev *dev, uint64_t off, const void *buf, size_t len)
{
	struct iodev *io = dev->priv;
	uint64_t first = off / io->bsize, count, allowed;
	size_t bytes = len;
	int err;

	if (len == 0)
		return 0;
	if (io->c.crashed || at_limit(io)) {
		io->c.crashed = 1;
		return -EIO;
	}
	count = (off + len + io->bsize - 1) / io->bsize - first;
	allowed = count;
	if (io->limit_kind == LIMIT_BLOCKS && io->limit - io->c.blocks < count) {
		/* the crash falls inside this write: its first blocks get there */
		allowed = io->limit - io->c.blocks;
		bytes = (size_t)((first + allowed) * io->bsize - off);
	}
	err = sufs_dev_write(io->inner, off, buf, bytes);
	if (err)
		return err;
	io->c.blocks += allowed;
	io->c.writes++;
	if (io->log) {
		err = log_write(io, first, allowed, off, buf, bytes);
		if (err)
			return err;
	}
	if (allowed < count) {
		io->c.crashed = 1;
		return -EIO;
	}
	return 0;
}

static int wrap_barrier(struct sufs_dev *dev)
{
	struct iodev *io = dev->priv;
	uint8_t rec = IOLOG_BARRIER;
	int err;

	if (io->c.crashed)
		return -EIO;
	err = sufs_dev_barrier(io->inner);
	if (err)
		return err;
	io->c.barriers++;
	if (io->log) {
		err = log_bytes(io, &rec, 1);
		if (!err && fflush(io->log)) {
			io->c.log_error = errno ? errno : EIO;
			err = -EIO;
		}
	}
	return err;
}

static int wrap_resize(struct sufs_dev *dev, uint64_t bytes)
{
	struct iodev *io = dev->priv;
	int err;

	if (io->c.crashed)
		return -EIO;
	err = sufs_dev_resize(io->inner, bytes);
	if (!err)
		dev->size = io->inner->size;
	return err;
}

/* Called by sufs_dev_close(), which then frees dev itself. */
static void wrap_close(struct sufs_dev *dev)
{
	struct iodev *io = dev->priv;

	sufs_dev_close(io->inner);
	io->inner = NULL;
	if (io->log && fclose(io->log) && !io->c.log_error)
		io->c.log_error = errno ? errno : EIO;
	io->log = NULL;
	io->dev = NULL;
}

static const struct sufs_dev_ops wrap_ops = {
	.read = wrap_read,
	.write = wrap_write,
	.barrier = wrap_barrier,
	.resize = wrap_resize,
	.close = wrap_close,
};

/* The block size the superblock states, or the default when there is no
 * believable one (sufs_open_dev() will then refuse the image anyway). */
static uint32_t peek_block_size(struct sufs_dev *inner)
{
	uint8_t raw[SUFS_SB_SIZE];
	struct sufs_super sb;

	if (inner->size >= SUFS_SB_OFFSET + SUFS_SB_SIZE &&
	    sufs_dev_read(inner, SUFS_SB_OFFSET, raw, sizeof(raw)) == 0) {
		sufs_super_decode(raw, &sb);
		if (sb.magic == SUFS_MAGIC && sb.block_size >= SUFS_MIN_BLOCK_SIZE &&
		    sb.block_size <= SUFS_MAX_BLOCK_SIZE && !(sb.block_size & (sb.block_size - 1)))
			return sb.block_size;
	}
	return SUFS_DEF_BLOCK_SIZE;
}

int iodev_open(const char *path, unsigned flags, struct iodev **out)
{
	struct sufs_dev *inner, *dev;
	struct iodev *io;
	int err = sufs_dev_open(path, SUFS_DEV_RDWR | flags, &inner);

	if (err)
		return err;
	io = calloc(1, sizeof(*io));
	dev = calloc(1, sizeof(*dev));
	if (!io || !dev || !(dev->name = strdup(inner->name))) {
		free(io);
		free(dev);
		sufs_dev_close(inner);
		return -ENOMEM;
	}
	dev->ops = &wrap_ops;
	dev->priv = io;
	dev->size = inner->size;
	dev->writable = inner->writable;
	dev->is_blockdev = inner->is_blockdev;
	io->dev = dev;
	io->inner = inner;
	io->bsize = peek_block_size(inner);
	*out = io;
	return 0;
}

struct sufs_dev *iodev_dev(struct iodev *io)
{
	return io->dev;
}

uint32_t iodev_block_size(const struct iodev *io)
{
	return io->bsize;
}

void iodev_crash_after_blocks(struct iodev *io, uint64_t n)
{
	io->limit_kind = LIMIT_BLOCKS;
	io->limit = n;
}

void iodev_crash_after_barriers(struct iodev *io, uint64_t n)
{
	io->limit_kind = LIMIT_BARRIERS;
	io->limit = n;
}

void iodev_counts(const struct iodev *io, struct iodev_counts *out)
{
	*out = io->c;
}

int iodev_free(struct iodev *io)
{
	int err;

	if (!io)
		return 0;
	if (io->dev)
		sufs_dev_close(io->dev);
	err = io->c.log_error;
	free(io->readback);
	free(io);
	return err ? -err : 0;
}
